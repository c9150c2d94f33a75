import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { PermitConflict, PermitShape } from '../../interfaces/permit-store.interface.js';

/**
 * The error of a request whose shape disagrees with the one its key is in use with, for the engine to throw:
 * a configuration mistake (two callers of one key that disagree), never a silent larger limit.
 * @param scope where the request's options come from, for the message (e.g. `@WithLock(Export.run)`)
 */
export function permitConflictError(
  asked: PermitShape,
  conflict: PermitConflict['inUseAs'],
  scope = '',
): LockConfigurationError {
  const name = 'limit' in asked ? 'limit' : 'mode';
  const inUse =
    conflict === 'read-write' ? 'a readers-writer lock (mode read or write)' : `a semaphore with limit ${conflict}`;
  return new LockConfigurationError(
    scope ? `${scope}.${name}` : name,
    'limit' in asked ? asked.limit : asked.mode,
    `the key is in use as ${inUse} while any of its permits or waiters lasts; every caller of one key must ask ` +
      'for the same limit, or all for a mode',
  );
}
