import type { Duration } from '../utils/duration.js';
import type { LockSectionOptions } from './lock-options.interface.js';

/** Options of `@WithLock`: those of a locked section plus what to do on contention and how long to hold. */
export interface WithLockOptions extends LockSectionOptions {
  /**
   * What a call does when the lock stays held past `wait`: `'throw'` a `LockNotAcquiredError` (409 on
   * HTTP), or `'skip'` the call and resolve `undefined` (logged at debug).
   * @default 'skip' on a `@Cron` or `@Interval` method, else 'throw'
   */
  readonly onContention?: 'throw' | 'skip';
  /**
   * Keep the lease at least this long after the call started, even if it finished sooner (a token-checked
   * expiry instead of a delete); `0` releases it at once. A `@Cron` or `@Interval` method needs none: without
   * it, each of its runs claims its scheduled tick (see docs/recipes.md, "Cron jobs across instances"), so that
   * one instance runs each tick however short the job and however far apart the instances' timers fire.
   */
  readonly holdAtLeast?: Duration;
}
