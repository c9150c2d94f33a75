import { LockStoreError } from '../../errors/lock-store.error.js';

/**
 * The `LockStoreError` of a Redis-family store: `operation` on `key` failed with the client's `cause`, which
 * keeps only the name of the failed command (see withoutArguments).
 * @param detail why, in words, when the cause alone does not say it, naming no Redis key of the resource
 * @param keyedDetail why, naming the Redis keys of the resource (see `LockStoreError`)
 */
export function redisStoreError(
  operation: string,
  key: string | undefined,
  cause: unknown,
  detail?: string,
  keyedDetail?: string,
): LockStoreError {
  return new LockStoreError(operation, key, withoutArguments(cause), detail, keyedDetail);
}

/** An error's message, or what was thrown as text. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Whether Redis refused a command on a key that holds another type of value than the command works on. */
export function isWrongType(error: unknown): boolean {
  return /WRONGTYPE/.test(errorMessage(error));
}

/** The values of a pipeline's replies; throws the first error among them, as a single command would. */
export function pipelineValues(replies: Array<[error: Error | null, value: unknown]> | null): unknown[] {
  return (replies ?? []).map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

/**
 * ioredis attaches the failed command to its errors, arguments included; ours carry the lease token, and
 * a failed AUTH carries the password, which would reach every log that prints the LockStoreError with its
 * `cause`. Keeps the command name.
 */
export function withoutArguments(error: unknown): unknown {
  const command = error instanceof Error ? (error as { command?: unknown }).command : undefined;
  if (typeof command === 'object' && command !== null) {
    (error as { command: unknown }).command = { name: (command as { name?: unknown }).name };
  }
  return error;
}
