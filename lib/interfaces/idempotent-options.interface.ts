import type { Duration } from '../utils/duration.js';

/** What `@Idempotent()` and `LockService.idempotent()` share. */
export interface IdempotencyBaseOptions {
  /**
   * How long the final response is kept and replayed (ms or a duration string like `'24h'`).
   * @default '24h'
   */
  readonly ttl?: Duration;
  /**
   * How long a duplicate that arrives while the first request runs waits for its response before it is
   * refused (`LockNotAcquiredError`: 409 with `Retry-After` over HTTP); `0` refuses at once.
   * @default 0
   */
  readonly wait?: Duration;
  /**
   * The largest response kept, in bytes of its stored form. A bigger one fails the first request with a
   * `LockConfigurationError` that says so (its work is done: raise the limit, or return less).
   * @default 1048576 (1 MiB)
   */
  readonly maxBodyBytes?: number;
}

/** Options of `@Idempotent()`. */
export interface IdempotentOptions extends IdempotencyBaseOptions {
  /**
   * The request header that carries the key, as clients send it (matched without regard to case).
   * @default 'Idempotency-Key'
   */
  readonly header?: string;
  /**
   * Whether a request without the header is refused (`IdempotencyKeyInvalidError`: 400); when false, it runs
   * as if the handler had no `@Idempotent()`.
   * @default false
   */
  readonly required?: boolean;
  /**
   * A key template that keeps one caller's keys apart from another's, read from the request
   * (`'<user.id>'`, `'<headers.x-tenant-id>'`, `'<params.accountId>'`): two callers that send the same key
   * then never share a response. Without it, keys are shared by every caller of the handler.
   */
  readonly scope?: string;
}

/** Options of `LockService.idempotent()`. */
export interface IdempotencyOptions extends IdempotencyBaseOptions {
  /**
   * Keeps one caller's keys apart from another's (a tenant, a user id): the same key under two scopes names
   * two operations.
   * @default ''
   */
  readonly scope?: string;
  /**
   * What the operation is, for example a hash of the message it serves: a later call with the same key and
   * another fingerprint is refused with `IdempotencyKeyReusedError` instead of being answered with the first
   * call's result.
   * @default ''
   */
  readonly fingerprint?: string;
}
