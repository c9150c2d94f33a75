import { hideProperty, LockError } from './lock.error.js';
import { lockSubject } from './lock-subject.js';

/** The lock is held by someone else and the wait policy gave up; the store itself is healthy. */
export class LockNotAcquiredError extends LockError {
  readonly code = 'LOCK_NOT_ACQUIRED' as const;
  /** The resource that is held: the resolved key (not printed with the error; see {@link LockError}). */
  declare readonly key: string;

  /**
   * Whole seconds after which a retry may succeed, as the manager judged it (the `retryAfter` option, or
   * the smaller of the holder's remaining lease and the key template's usual hold): what clients are told
   * in `Retry-After`.
   */
  retryAfter?: number;

  /**
   * @param key the resource that is held
   * @param remainingTime the holder's remaining lease in ms when last seen (`undefined` if unknown)
   * @param waited how long this caller waited, in ms
   */
  constructor(
    key: string,
    readonly remainingTime: number | undefined,
    readonly waited: number,
  ) {
    super(held(undefined, remainingTime, waited));
    hideProperty(this, 'key', key);
  }

  /** @internal */
  override describeResource(name: string | undefined): string {
    return held(name, this.remainingTime, this.waited);
  }
}

function held(name: string | undefined, remainingTime: number | undefined, waited: number): string {
  const holder = remainingTime === undefined ? '' : ` (the holder's lease ends in ${remainingTime} ms)`;
  const wait = waited > 0 ? ` after waiting ${Math.round(waited)} ms` : '';
  return `${lockSubject(name)} is held by another owner${holder}; not acquired${wait}.`;
}
