/**
 * What a store says about the leases it can keep, for the manager's checks of every ttl: its least lease, its
 * clock-drift rule, its hand-off window, and how long a kept lease surely lasts. A store without a rule leaves
 * it out; the manager then uses its defaults.
 */
export interface LeaseLimits {
  /**
   * The least `ttl`, in ms, the store can grant (etcd counts leases in whole seconds: 1000). The manager
   * refuses a shorter ttl with `LockConfigurationError` where it is set: the module's defaults at startup, a
   * call's or a decorator's options when they are first used.
   */
  readonly minTtl?: number;
  /**
   * How much of a `ttl` ms lease a holder must keep back for clock drift, when the store has its own rule
   * (Redlock's `driftFactor`). Without it: 1 % of the lease plus 2 ms.
   */
  clockDrift?(ttl: number): number;
  /**
   * For how many ms a contended release reserves the key for the process first in line (the hand-off
   * window). The manager keeps every ttl at least twice as long, so that a process that died while first in
   * line costs the others clearly less than a crashed holder does.
   */
  readonly handoffWindow?: number;
  /**
   * The longest keep, at most `ms`, that this store surely ends within `ms` (etcd counts leases in whole
   * seconds, grants none under its least lease, and drops one that ran out up to a second late); `0` when none
   * is that short. A scheduled run's claim on its tick asks it, so that a kept lease never outlasts its window
   * and refuses the next tick. Without it, a lease kept for `ms` (`extend`) ends after `ms`.
   */
  keepWithin?(ms: number): number;
}
