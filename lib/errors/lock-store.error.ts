import { describeFailureKind, failureKind } from '../utils/failure-kind.js';
import { printable, quoted } from '../utils/printable.js';
import { hideProperty, isLockError, LockError } from './lock.error.js';

/**
 * The lock store failed (unreachable, timed out, refused a command); says nothing about who holds the lock.
 * Its message says why by `detail`, else by the kind of the cause (`connection refused (ECONNREFUSED)`,
 * `WRONGTYPE`, `timeout`): the cause's own text, like `keyedDetail`, is only in messages that may name the
 * resolved key (or when no key is concerned, as at startup).
 */
export class LockStoreError extends LockError {
  readonly code = 'LOCK_STORE_ERROR' as const;
  /** The resource concerned, when there is one: the resolved key (not printed with the error). */
  declare readonly key: string | undefined;
  /** The reason naming the store's keys of the resource, when there is one (not printed with the error). */
  declare readonly keyedDetail: string | undefined;

  /**
   * @param operation what we were doing (`acquire`, `release`, ...)
   * @param key the resource concerned, when there is one
   * @param cause the client's own error
   * @param detail why, in words, when the cause alone does not say it; never the key or a store key made of it
   * @param keyedDetail why, naming the store's keys of the resource (they carry the resolved key): shown
   *   instead of `detail` only where the resolved key may be
   */
  constructor(
    readonly operation: string,
    key: string | undefined,
    cause: unknown,
    readonly detail?: string,
    keyedDetail?: string,
  ) {
    super(failed(operation, undefined, reasonOf(key, cause, detail, keyedDetail, false)), { cause });
    hideProperty(this, 'key', key);
    hideProperty(this, 'keyedDetail', keyedDetail);
  }

  /** @internal */
  override describeResource(name: string | undefined, keyShown: boolean): string {
    return failed(this.operation, name, reasonOf(this.key, this.cause, this.detail, this.keyedDetail, keyShown));
  }
}

function failed(operation: string, name: string | undefined, reason: string): string {
  return `Lock store failed to ${operation}${name === undefined ? '' : ` ${quoted(name)}`}: ${printable(reason)}`;
}

/**
 * Why, as a message may say it: everything where the key may be shown or none is concerned; else the detail,
 * or the kind of the cause, whose text may quote what the command was about.
 */
function reasonOf(
  key: string | undefined,
  cause: unknown,
  detail: string | undefined,
  keyedDetail: string | undefined,
  keyShown: boolean,
): string {
  if (keyShown || key === undefined) return keyedDetail ?? detail ?? textOf(cause);
  if (detail !== undefined) return detail;
  // our own errors name no key unless the application opted in
  if (isLockError(cause)) return cause.message;
  const kind = failureKind(cause);
  if (kind !== undefined) return describeFailureKind(kind);
  const name = (cause as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && name !== 'Error' ? `failed (${name})` : 'failed';
}

function textOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * `error` as a {@link LockStoreError}: itself when it already is one (a store that explained its failure),
 * else wrapped, naming what we were doing. @internal
 */
export function asStoreError(operation: string, key: string | undefined, error: unknown): LockStoreError {
  return error instanceof LockStoreError ? error : new LockStoreError(operation, key, error);
}
