import { LockError } from './lock.error.js';

/** The longest idempotency key, in characters: a UUID is 36, the IETF draft's examples are shorter still. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * A request to an `@Idempotent({ required: true })` handler came without its idempotency key, or any request
 * with a key that cannot be one (empty, too long, not visible ASCII). Nothing ran. HTTP: `400 Bad Request`.
 * The message never quotes the value sent.
 */
export class IdempotencyKeyInvalidError extends LockError {
  /** See {@link LockError.code}. */
  readonly code = 'LOCK_IDEMPOTENCY_KEY_INVALID' as const;

  constructor(
    /** The header the key is read from. */
    readonly header: string,
    /** Whether the header was missing or its value cannot be a key. */
    readonly problem: 'missing' | 'malformed',
  ) {
    super(
      problem === 'missing'
        ? `This request needs an ${header} header (a unique value per operation, repeated on each retry).`
        : `The ${header} header must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters, optionally in double quotes.`,
    );
  }
}
