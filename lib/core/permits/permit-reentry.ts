import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { PermitShape } from '../../interfaces/permit-store.interface.js';
import { permitConflictError } from './permit-conflict.js';
import type { Lock } from '../lock.js';

/**
 * The lock a nested request of a key gets back from what its async flow already holds of it, as a nested
 * mutex request does, or a clear error where waiting would wait for the flow itself (never a deadlock):
 * - a mutex lease covers any request of its key (it keeps every permit out);
 * - a write permit covers a read, a write, or a mutex request (it keeps every other holder out);
 * - a read permit covers a read; a semaphore permit covers a request with the same `limit`;
 * - a read permit asked for a write or a mutex, or a semaphore permit asked for a mutex, is an upgrade:
 *   a `LockConfigurationError` (take the stronger lock first);
 * - any other shape is the conflict of two shapes on one key (`permitConflictError`).
 * @param asked the shape of the nested request; `undefined` for a mutex
 * @throws LockConfigurationError for an upgrade or a conflict
 */
export function reenter(held: Lock, asked: PermitShape | undefined): Lock {
  const { shape } = held;
  if (!shape) return held;
  if ('mode' in shape) {
    if (asked && 'limit' in asked) throw permitConflictError(asked, 'read-write');
    if (shape.mode === 'write' || (asked && asked.mode === 'read')) return held;
    throw upgradeError('a read permit', asked);
  }
  if (!asked) throw upgradeError(`a permit of a semaphore with limit ${shape.limit}`, asked);
  if ('limit' in asked && asked.limit === shape.limit) return held;
  throw permitConflictError(asked, shape.limit);
}

/** The error of a nested request that asks for more of a key than the permit its flow holds of it. */
function upgradeError(held: string, asked: PermitShape | undefined): LockConfigurationError {
  const wanted = asked ? `a ${'mode' in asked ? asked.mode : 'semaphore'} permit` : 'the exclusive (mutex) lock';
  return new LockConfigurationError(
    'mode',
    asked && 'mode' in asked ? asked.mode : undefined,
    `this async flow holds ${held} of the key and asks for ${wanted} of it inside; that would wait for its own ` +
      'permit forever. Take the stronger lock first (a writer may read), or ask for it outside the section',
  );
}
