import { quoted } from '../utils/printable.js';
import { LockError } from './lock.error.js';

/** The lock is held by someone else and the wait policy gave up; the store itself is healthy. */
export class LockNotAcquiredError extends LockError {
  readonly code = 'LOCK_NOT_ACQUIRED' as const;

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
    readonly key: string,
    readonly remainingTime: number | undefined,
    readonly waited: number,
  ) {
    const holder = remainingTime === undefined ? '' : ` (the holder's lease ends in ${remainingTime} ms)`;
    const wait = waited > 0 ? ` after waiting ${Math.round(waited)} ms` : '';
    super(`Lock ${quoted(key)} is held by another owner${holder}; not acquired${wait}.`);
  }
}
