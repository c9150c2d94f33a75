import type { EtcdResourceKeys } from './etcd-keys.js';
import type { WatchStart } from './etcd-watch-room.js';

/** Refusals remembered for the watch that follows them (a waiter's), the oldest dropped first. */
const MAX_REFUSALS = 1000;

/** A refused attempt: the revision at which it was refused, for the watch that follows to start right after it. */
export interface Refusal {
  readonly revision: string;
  /** When (`performance.now()`) the refused request was sent. */
  readonly at: number;
}

/**
 * The last refusal of each resource, kept until its waiter watches: a watch started right after the refused
 * revision misses no release in between. Bounded, since the keys come from the callers.
 */
export class EtcdRefusals {
  private readonly byRoom = new Map<string, Refusal>();

  /** Remembers the last refusal of the resource, in place of an earlier one. */
  remember(keys: EtcdResourceKeys, refusal: Refusal): void {
    const id = keys.room.toString('latin1');
    this.byRoom.delete(id);
    this.byRoom.set(id, refusal);
    if (this.byRoom.size > MAX_REFUSALS) this.byRoom.delete(this.byRoom.keys().next().value as string);
  }

  /**
   * Where a watch of the resource from `since` starts: after the last refusal, taken (it serves one watch),
   * when that refusal was at or after `since`, which tells the revision from which on nothing may be missed.
   */
  takeWatchStart(keys: EtcdResourceKeys, since: number | undefined): WatchStart | undefined {
    const id = keys.room.toString('latin1');
    const refusal = this.byRoom.get(id);
    this.byRoom.delete(id);
    return refusal && since !== undefined && refusal.at >= since
      ? { afterRevision: refusal.revision, since }
      : undefined;
  }
}
