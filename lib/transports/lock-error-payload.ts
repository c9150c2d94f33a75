import type { LockError } from '../errors/lock.error.js';
import type { LockKeyError } from '../errors/lock-key.error.js';
import type { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import type { LockStoreError } from '../errors/lock-store.error.js';
import { isShutdownRefusal } from '../core/shutdown-gate.js';

/**
 * What a client is told about a lock error, the same on every transport: `LOCKED` (held by another
 * operation: retry later), `LOCK_UNAVAILABLE` (the lock store is down or the service is shutting down:
 * retry, perhaps elsewhere), `LOCK_LOST` (the lease ended before the operation finished: retry),
 * `LOCK_KEY_INVALID` (the request's values make no usable key: do not retry as is),
 * `IDEMPOTENCY_KEY_REUSED` (the idempotency key belongs to another request: use a new key) and
 * `IDEMPOTENCY_KEY_INVALID` (the idempotency key is missing or malformed: send one).
 */
export type LockErrorPayloadCode =
  | 'LOCKED'
  | 'LOCK_UNAVAILABLE'
  | 'LOCK_LOST'
  | 'LOCK_KEY_INVALID'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'IDEMPOTENCY_KEY_INVALID';

/**
 * The body of a lock error as a client sees it: never the token, and no text derived from the request or
 * from server data (the resolved key, a key's value) unless `exposeResolvedKeys` asks for it.
 */
export interface LockErrorPayload {
  readonly code: LockErrorPayloadCode;
  readonly message: string;
  /**
   * The resource: its key template (`'inventory:<productId>'`) when known, the resolved key instead with
   * the module option `exposeResolvedKeys`; absent when neither may be shown.
   */
  readonly resource?: string;
  /**
   * Whole seconds after which a retry may succeed (the `Retry-After` of HTTP). For `LOCKED`: the
   * `retryAfter` option, else the smaller of the holder's remaining lease and how long holders of that key
   * template usually keep it, at least 1.
   */
  readonly retryAfter?: number;
}

/** How much a payload may reveal. */
export interface LockErrorPayloadOptions {
  /**
   * Name the resolved key (`inventory:42`) instead of its template, and give an unusable key's own message
   * (which quotes the key or a value) instead of a fixed one. @default false
   */
  readonly exposeResolvedKeys?: boolean;
}

/**
 * The client-facing payload of a lock error, or `undefined` for errors that are the application's own
 * fault (configuration, a call before the module is ready), which stay server errors.
 */
export function lockErrorPayload(
  error: LockError,
  options: LockErrorPayloadOptions = {},
): LockErrorPayload | undefined {
  const resource = options.exposeResolvedKeys ? (resolvedKeyOf(error) ?? error.keyTemplate) : error.keyTemplate;
  const named = resource === undefined ? {} : { resource };
  const subject = resource === undefined ? 'The resource' : `Resource "${resource}"`;
  switch (error.code) {
    case 'LOCK_NOT_ACQUIRED':
      return {
        code: 'LOCKED',
        message: `${subject} is locked by another operation; retry later.`,
        ...named,
        retryAfter: retryAfterSeconds(error as LockNotAcquiredError),
      };
    case 'LOCK_STORE_ERROR':
      return {
        code: 'LOCK_UNAVAILABLE',
        message: isShutdownRefusal(error as LockStoreError)
          ? 'This instance is shutting down; retry, another instance will serve it.'
          : 'The lock store is unavailable; retry later.',
        ...named,
        retryAfter: 1,
      };
    case 'LOCK_LOST':
      return {
        code: 'LOCK_LOST',
        message: `The lock on ${resource === undefined ? 'the resource' : `"${resource}"`} was lost before the operation finished; retry.`,
        ...named,
        retryAfter: 1,
      };
    case 'LOCK_KEY_INVALID':
      return {
        code: 'LOCK_KEY_INVALID',
        // the error's own message may quote the key or a value of the request: only on request
        message: options.exposeResolvedKeys
          ? ((error as LockKeyError).keyedMessage ?? error.message)
          : ((error as LockKeyError).clientMessage ??
            `The request's values make no usable lock key${resource === undefined ? '' : ` for "${resource}"`}; do not retry it as is.`),
        ...named,
      };
    case 'LOCK_IDEMPOTENCY_KEY_REUSED':
      return { code: 'IDEMPOTENCY_KEY_REUSED', message: error.message };
    case 'LOCK_IDEMPOTENCY_KEY_INVALID':
      return { code: 'IDEMPOTENCY_KEY_INVALID', message: error.message };
    default:
      return undefined;
  }
}

/** Whole seconds until a retry may succeed: the manager's judgement, else from the holder's remaining lease (at least 1). */
function retryAfterSeconds(error: LockNotAcquiredError): number {
  return error.retryAfter ?? Math.max(1, Math.ceil((error.remainingTime ?? 1000) / 1000));
}

function resolvedKeyOf(error: LockError): string | undefined {
  const key = (error as { key?: unknown }).key;
  return typeof key === 'string' ? key : undefined;
}
