import { LockError } from './lock.error.js';

/**
 * An idempotency key came back with a different request than the one it was first used for (another method,
 * path or body; another fingerprint for `LockService.idempotent()`). Nothing ran: a client that reuses a key
 * for new work must pick a new key. HTTP: `422 Unprocessable Content`. The message never carries the key.
 */
export class IdempotencyKeyReusedError extends LockError {
  /** See {@link LockError.code}. */
  readonly code = 'LOCK_IDEMPOTENCY_KEY_REUSED' as const;

  /** @param header what clients send the key as (the header's name), for the message */
  constructor(
    /** What clients send the key as: the header's name, or `'idempotency key'`. */
    readonly header = 'idempotency key',
  ) {
    super(
      `This ${header} was first used for a different request (method, path or body); ` +
        'a retry must repeat the request exactly, new work needs a new key.',
    );
  }
}
