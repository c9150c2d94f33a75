/** The instrumentation scope (meter and tracer name) of every metric and span. */
export const LOCK_INSTRUMENTATION_SCOPE = 'nestjs-lock';

/**
 * The metric names. In Prometheus, dots become underscores, counters end in `_total` and durations in
 * `_seconds` (e.g. `lock_wait_duration_seconds_bucket`).
 */
export const LOCK_METRICS = Object.freeze({
  /** Counter of granted leases. */
  acquisitions: 'lock.acquisitions',
  /** Counter of acquisitions that found the key held. */
  contentions: 'lock.contentions',
  /** Histogram (s) from the call to the grant or the give-up; `lock.acquired` says which. */
  waitDuration: 'lock.wait.duration',
  /** Histogram (s) from the grant to the release or the loss; `lock.outcome` says which. */
  holdDuration: 'lock.hold.duration',
  /** Counter of leases lost before their holder released them, by `lock.lost.reason`. */
  lost: 'lock.lost',
  /** Counter of grants that came back after their validity ended and were released unused. */
  lateGrants: 'lock.late_grants',
  /** Counter of lease extensions: `lock.renewal` is `auto` (the scheduler) or `manual` (`lock.extend()`). */
  renewals: 'lock.renewals',
  /** Counter of store failures, by `lock.operation`. */
  storeErrors: 'lock.store.errors',
  /** Counter of calls skipped because their lock was busy. */
  skipped: 'lock.skipped',
  /** Observable up-down counter (a gauge in Prometheus) of leases held by this process right now. */
  held: 'lock.held',
  /** Observable up-down counter, by `lock.leadership`: 1 while this process leads that leadership, else 0. */
  leader: 'lock.leader',
  /** Observable gauge, by `lock.leadership`: the term this process leads with, while it leads. */
  leaderTerm: 'lock.leader.term',
  /**
   * Histogram (s) of how long each term lasted in this process, until it resigned (`lock.leadership.outcome`
   * `resigned`, with `lock.leadership.cause`) or lost it (`lost`, with `lock.lost.reason`).
   */
  leadershipDuration: 'lock.leadership.duration',
});
