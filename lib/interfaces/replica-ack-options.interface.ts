import type { Duration } from '../utils/duration.js';

/**
 * Replica acknowledgement of lease writes (Redis `WAIT`): a grant or renewal counts only once this many
 * replicas of the master that took it have it, so a failover right after it does not silently lose it.
 */
export interface ReplicaAckOptions {
  /** How many replicas must hold the write, 1 or more. */
  readonly replicas: number;
  /**
   * How long to wait for them, more than 0. WAIT holds up every command this process sends to that master
   * meanwhile, so keep it short (tens of ms on a healthy network) and under the client's `commandTimeout`.
   */
  readonly timeout: Duration;
}
