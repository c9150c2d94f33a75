import type { LockHolder } from '../interfaces/lock-info.interface.js';

/** Who leads a leadership, as the store tells it (`inspectLeader()`). */
export interface LeaderInfo {
  /** Whether some instance leads right now (the leader's lease is held). */
  readonly led: boolean;
  /** The last term granted: the leader's own while `led`. */
  readonly term?: number;
  /** The leader's process (host, pid, since when), while `led`. */
  readonly leader?: LockHolder;
  /** How long the leader's lease lasts without a renewal, in ms, while `led`. */
  readonly remainingTtl?: number;
}
