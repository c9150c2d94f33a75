import { printable, quoted } from '../utils/printable.js';
import { LockError } from './lock.error.js';

/** The lock store failed (unreachable, timed out, refused a command); says nothing about who holds the lock. */
export class LockStoreError extends LockError {
  readonly code = 'LOCK_STORE_ERROR' as const;

  /**
   * @param operation what we were doing (`acquire`, `release`, ...)
   * @param key the resource concerned, when there is one
   * @param cause the client's own error
   * @param detail why, in words, when the cause alone does not say it; it may name Redis keys (they carry
   *   the resolved key), so what goes to spans without `resolvedKeys` does not use it when there is a cause
   */
  constructor(
    readonly operation: string,
    readonly key: string | undefined,
    cause: unknown,
    readonly detail?: string,
  ) {
    const reason = detail ?? (cause instanceof Error ? cause.message : String(cause));
    super(`Lock store failed to ${operation}${key === undefined ? '' : ` ${quoted(key)}`}: ${printable(reason)}`, {
      cause,
    });
  }
}

/**
 * `error` as a {@link LockStoreError}: itself when it already is one (a store that explained its failure),
 * else wrapped, naming what we were doing. @internal
 */
export function asStoreError(operation: string, key: string | undefined, error: unknown): LockStoreError {
  return error instanceof LockStoreError ? error : new LockStoreError(operation, key, error);
}
