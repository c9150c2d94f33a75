import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import type { LeaseBounds } from '../interfaces/store-family.interface.js';

/**
 * Whether a `ttl` ms lease with `drift` ms of clock-drift allowance is one a holder may work under: the allowance
 * is at most a third of it (see {@link checkDriftAllowance}). Leases and extensions are refused below it; only a
 * release's keep (`release(keepFor)`, the last ms of a `holdAtLeast`) asks the store for less.
 */
export function leavesRoomForRenewal(ttl: number, drift: number): boolean {
  return drift * 3 <= ttl;
}

/**
 * Refuses a ttl whose clock-drift allowance is more than a third of it. A lease is renewed at a third of its
 * ttl, and counts as ours until `ttl - drift` after its request: past a third, the lease would be over, or
 * nearly, before its first renewal could run (a Redlock `driftFactor` near 1/3 does this).
 * @throws LockConfigurationError naming `option`
 */
export function checkDriftAllowance(ttl: number, drift: number, option: string): void {
  if (leavesRoomForRenewal(ttl, drift)) return;
  throw new LockConfigurationError(
    option,
    ttl,
    `expected a ttl of more than three times the store's clock-drift allowance (${drift} ms for this ttl): a lease is ` +
      'renewed at a third of its ttl, and its validity (the ttl minus that allowance) must outlast that with room; ' +
      'use a longer ttl or a smaller driftFactor',
  );
}

/**
 * Refuses a hand-off window over half the ttl. The window reserves a released key for the process first in
 * line; if that process died while waiting, everyone else waits out the window, which must cost clearly
 * less than what a crashed holder already can (its ttl).
 * @param blame the option the message names: `'handoffWindow'` (module level), else the ttl option of one call
 * @throws LockConfigurationError naming the option blamed
 */
export function checkHandoffWindow(window: number | undefined, ttl: number, blame: string): void {
  if (window === undefined || window * 2 <= ttl) return;
  const why =
    'a released key is reserved for the process first in line for one window, so a process that died while ' +
    "waiting blocks the others that long, which must cost clearly less than a crashed holder's lease";
  throw blame === 'handoffWindow'
    ? new LockConfigurationError('handoffWindow', window, `expected at most half the ttl (${ttl} ms): ${why}`)
    : new LockConfigurationError(
        blame,
        ttl,
        `expected at least twice the store's handoffWindow (${window} ms): ${why}`,
      );
}

/**
 * Refuses a ttl shorter than the least the store can grant (`LeaseLimits.minTtl`; etcd counts leases in whole
 * seconds, so 1000 ms).
 * @param least the store's least ttl, when it has one
 * @param store the store's name, for the message
 * @throws LockConfigurationError naming `option`
 */
export function checkStoreMinimum(least: number | undefined, store: string, ttl: number, option: string): void {
  if (least === undefined || ttl >= least) return;
  throw new LockConfigurationError(
    option,
    ttl,
    `${store} grants leases of at least ${least} ms; give a ttl of ${least} ms or more`,
  );
}

/**
 * What a ttl must respect on `store`, as the store says: the one place that reads a store's `minTtl`,
 * `clockDrift` and `handoffWindow` (its `capabilities.limits`).
 */
export function leaseBoundsOf(store: LockStore): LeaseBounds {
  const limits = store.capabilities?.limits;
  return {
    store: store.constructor.name,
    minTtl: limits?.minTtl,
    clockDrift: limits?.clockDrift && ((ttl) => limits.clockDrift!(ttl)),
    handoffWindow: limits?.handoffWindow,
  };
}

/**
 * Refuses a ttl set after startup (by one call, a decorator, or `extend`) that `store` cannot keep: the three
 * checks above, each blaming `option`.
 * @param drift the clock-drift allowance of this ttl
 * @throws LockConfigurationError naming `option`
 */
export function checkTtlForStore(store: LockStore, ttl: number, drift: number, option: string): void {
  const bounds = leaseBoundsOf(store);
  checkDriftAllowance(ttl, drift, option);
  checkHandoffWindow(bounds.handoffWindow, ttl, option);
  checkStoreMinimum(bounds.minTtl, bounds.store, ttl, option);
}
