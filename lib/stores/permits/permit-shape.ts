import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { PermitConflict, PermitShape } from '../../interfaces/permit-store.interface.js';

/** The most holders a semaphore may have: far beyond any real quota, and a line walk stays cheap. */
export const MAX_PERMIT_LIMIT = 100_000;

/** How a store marks a permit's mode: `p` a semaphore permit, `r` a reader, `w` the writer. */
export type PermitModeCode = 'p' | 'r' | 'w';

/**
 * Checks a request's shape: a `limit` of whole holders from 1 to {@link MAX_PERMIT_LIMIT}, or a `mode` of
 * `read` or `write`, never both.
 * @param scope where the options come from, for messages (e.g. `@WithLock(Export.run)`)
 * @throws LockConfigurationError naming the option
 */
export function checkPermitShape(shape: PermitShape, scope = ''): PermitShape {
  const option = (name: string): string => (scope ? `${scope}.${name}` : name);
  const { limit, mode } = shape as { limit?: unknown; mode?: unknown };
  if (limit !== undefined && mode !== undefined) {
    throw new LockConfigurationError(
      option('mode'),
      mode,
      'a key is either a semaphore (limit) or a readers-writer lock (mode), not both: give one of them',
    );
  }
  if (mode !== undefined) {
    if (mode !== 'read' && mode !== 'write')
      throw new LockConfigurationError(option('mode'), mode, "expected 'read' or 'write'");
    return { mode };
  }
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_PERMIT_LIMIT) {
    throw new LockConfigurationError(
      option('limit'),
      limit,
      `expected a whole number of holders from 1 to ${MAX_PERMIT_LIMIT}`,
    );
  }
  return { limit };
}

/** The text a store keeps with a resource for its shape: `limit:<N>` or `rw`. */
export function shapeText(shape: PermitShape): string {
  return 'limit' in shape ? `limit:${shape.limit}` : 'rw';
}

/** The mode code of a request's permit. */
export function modeCode(shape: PermitShape): PermitModeCode {
  if ('limit' in shape) return 'p';
  return shape.mode === 'read' ? 'r' : 'w';
}

/** What a resource kept as `text` is in use as, for a {@link PermitConflict}. */
export function inUseAs(text: string): PermitConflict['inUseAs'] {
  return text.startsWith('limit:') ? Number(text.slice('limit:'.length)) : 'read-write';
}

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
