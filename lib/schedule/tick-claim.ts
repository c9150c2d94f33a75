import type { LockManager } from '../core/lock-manager.js';
import type { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import type { LockSettings } from '../options/lock-settings.js';
import { claimEnd, type TickSchedule } from './tick-schedule.js';

/** A scheduled method's claim on the tick a call runs for. */
export interface TickClaim {
  /** The claim's own key (see {@link tickClaimKey}). */
  readonly key: string;
  readonly settings: LockSettings;
  readonly ticks: TickSchedule;
  /** Told when another instance has claimed the tick, before the call is skipped. */
  readonly onClaimed: (error: LockNotAcquiredError) => void;
}

/**
 * The key of the tick claims of method `label` on `keys`. A key of its own, not the method's: the method's keys
 * are free for everyone else (requests, readers, other jobs) as soon as a run ends, and two jobs that share a
 * key each get their ticks.
 */
export function tickClaimKey(label: string, keys: readonly string[]): string {
  return `tick:${label}:${keys.join(',')}`;
}

/**
 * Runs a scheduled method once per tick across instances. Claims the tick first, without waiting (a tick
 * claimed elsewhere is skipped), then runs `section`, which takes the method's own keys and calls `started`
 * as the method starts. After a run the claim is kept until the end of the tick's window (`claimEnd`), by a
 * token-checked expiry, so every instance that fires later for the same tick is refused; a claim whose method
 * never started (its keys were busy) is given back at once, so an instance that fires later may run the tick.
 */
export async function runOncePerTick<T>(
  manager: LockManager,
  claim: TickClaim,
  section: (started: () => void) => Promise<T | undefined>,
): Promise<T | undefined> {
  let startedAt: number | undefined;
  return manager.runLocked([claim.key], claim.settings, () => section(() => (startedAt = Date.now())), {
    onContention: (error) => {
      claim.onClaimed(error);
      return undefined;
    },
    keepUntil: () => (startedAt === undefined ? 0 : claimEnd(claim.ticks, startedAt)),
  });
}
