import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { PermitShape } from '../interfaces/permit-store.interface.js';

/** The most holders a semaphore may have: far beyond any real quota, and a line walk stays cheap. */
export const MAX_PERMIT_LIMIT = 100_000;

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
