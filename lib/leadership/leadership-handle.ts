/**
 * One instance's campaign for a leadership, as `lead()` returns it: whether it leads, the term it holds, and
 * `stop()`.
 */
export interface LeadershipHandle {
  /** The leadership's name. */
  readonly name: string;
  /** Whether this instance leads right now: it holds a term whose lease is valid. */
  readonly isLeader: boolean;
  /** The term this instance holds right now, `undefined` while it does not lead. */
  readonly term: number | undefined;
  /**
   * Stops campaigning and resigns: the term's signal aborts (reason `resigned`) and, once the function has
   * returned, the lease is released, so another instance takes over at once instead of after the ttl. Resolves
   * then; at once when this instance does not lead. Safe to call more than once.
   */
  stop(): Promise<void>;
}
