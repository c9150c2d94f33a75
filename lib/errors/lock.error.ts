/** Stable codes of every error this package throws; match on `error.code`, it survives two copies of the package. */
export type LockErrorCode =
  'LOCK_NOT_ACQUIRED' | 'LOCK_LOST' | 'LOCK_STORE_ERROR' | 'LOCK_CONFIGURATION' | 'LOCK_KEY_INVALID' | 'LOCK_NOT_READY';

/** Base class of every error thrown by nestjs-lock. */
export abstract class LockError extends Error {
  /** A stable code that identifies the kind of failure. */
  abstract readonly code: LockErrorCode;

  /**
   * The bounded name of the resource concerned: the `@WithLock` key template (`'inventory:<productId>'`) or
   * the `metricKey` option of a direct call, when the lock layer knows it. What clients are told instead of
   * the resolved key, which may carry user data.
   */
  keyTemplate?: string;

  protected constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** True when `error` is a nestjs-lock error with the given code (works across package copies). */
export function isLockError(error: unknown, code?: LockErrorCode): error is LockError {
  if (!(error instanceof Error) || typeof (error as { code?: unknown }).code !== 'string') return false;
  const actual = (error as LockError).code;
  return code ? actual === code : actual.startsWith('LOCK_');
}

/** Names the resource of `error` by its bounded template (for clients), unless it already has one. */
export function withKeyTemplate<E extends LockError>(error: E, template: string | undefined): E {
  error.keyTemplate ??= template;
  return error;
}
