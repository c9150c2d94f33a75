/** Stable codes of every error this package throws; match on `error.code`, it survives two copies of the package. */
export type LockErrorCode =
  | 'LOCK_NOT_ACQUIRED'
  | 'LOCK_LOST'
  | 'LOCK_STORE_ERROR'
  | 'LOCK_CONFIGURATION'
  | 'LOCK_KEY_INVALID'
  | 'LOCK_NOT_READY'
  | 'LOCK_IDEMPOTENCY_KEY_REUSED'
  | 'LOCK_IDEMPOTENCY_KEY_INVALID';

/**
 * Base class of every error thrown by nestjs-lock. A message names a resource by its key template (or the
 * `metricKey` of a direct call), never by its resolved key, which may carry user data, unless the application
 * opted in (`exposeResolvedKeys`); the resolved key is the error's `key` property, for code, and is left out
 * when the error is printed or serialised.
 */
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

  /**
   * This error's message naming its resource as `name` (`undefined`: no resource in particular), or
   * `undefined` when its message names none and stays as it is.
   * @param keyShown whether `name` is the resolved key, so that details quoting it may be shown too
   * @internal
   */
  describeResource(_name: string | undefined, _keyShown: boolean): string | undefined {
    return undefined;
  }
}

/** True when `error` is a nestjs-lock error with the given code (works across package copies). */
export function isLockError(error: unknown, code?: LockErrorCode): error is LockError {
  if (!(error instanceof Error) || typeof (error as { code?: unknown }).code !== 'string') return false;
  const actual = (error as LockError).code;
  return code ? actual === code : actual.startsWith('LOCK_');
}

/** Errors whose message names their resolved key: the application opted in, and a later naming keeps it. */
const keysShown = new WeakSet<LockError>();

/**
 * Names the resource of `error` in its message (and in the first line of its stack): by its key template
 * (`template`, unless it has one already), or by its resolved key when `showKey` (for an application that
 * opted in with `exposeResolvedKeys`; once shown, it stays). Returns `error`.
 */
export function withKeyTemplate<E extends LockError>(error: E, template: string | undefined, showKey = false): E {
  error.keyTemplate ??= template;
  const key = (error as { key?: unknown }).key;
  if (showKey) keysShown.add(error);
  const shown = keysShown.has(error);
  // an error of another copy of the package may predate this method
  const message = error.describeResource?.(shown && typeof key === 'string' ? key : error.keyTemplate, shown);
  if (message !== undefined) rewriteMessage(error, message);
  return error;
}

/**
 * Defines `name` on `error` as a property that is not enumerable (the resolved key, a detail that quotes it):
 * code reads it, while `util.inspect`, JSON loggers and `Object.entries` leave it out, as they do the stack.
 */
export function hideProperty(error: LockError, name: string, value: unknown): void {
  Object.defineProperty(error, name, { value, enumerable: false, writable: false, configurable: true });
}

/** Replaces the message of `error`, and the message in its stack when the stack was already written out. */
function rewriteMessage(error: Error, message: string): void {
  const previous = error.message;
  if (message === previous) return;
  error.message = message;
  // V8 writes the stack out when it is first read, with the message of that moment
  const stack = error.stack;
  if (stack !== undefined && !stack.includes(message) && stack.includes(previous)) {
    error.stack = stack.replace(previous, () => message);
  }
}
