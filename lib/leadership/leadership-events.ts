import type { LockLostError, LockLostReason } from '../errors/lock-lost.error.js';

/** What every leadership event tells. */
export interface LeadershipEventBase {
  /** The leadership's name, as given to `lead()` or `@Leader`. */
  readonly name: string;
  /** The leader's lease key, `leader:<name>`, as in the lease's own events. */
  readonly key: string;
  /** The same as `key`: a leadership name is bounded, as a key template is. */
  readonly keyTemplate: string;
  /** The term concerned: the fence of the leader's lease, above every term before it. */
  readonly term: number;
}

/** This instance won a leadership: its function is about to run with the term. */
export interface LeaderElectedEvent extends LeadershipEventBase {
  /** The lease's ttl in ms: how long the term outlives this instance should it crash. */
  readonly ttl: number;
}

/**
 * The term ended because its lease was lost before this instance let it go: another instance may lead by now.
 * The term's signal aborted with `error`. Emitted when the loss is found, while the term's function may still
 * run; no `resigned` follows for this term.
 */
export interface LeadershipLostEvent extends LeadershipEventBase {
  /** Why the lease ended (`taken`, `expired`, `stalled`, `store-unreachable`). */
  readonly reason: Exclude<LockLostReason, 'shutdown' | 'resigned' | 'released'>;
  /** What the term's signal aborted with. */
  readonly error: LockLostError;
  /** How long this instance led, in ms, until the loss was found. */
  readonly duration: number;
}

/** Why a leader gave up its term. */
export type ResignationCause = 'stopped' | 'returned' | 'threw' | 'shutdown';

/**
 * This instance gave up a term it still held (its lease released, so another instance may take over at once):
 * its handle was stopped, its function returned or threw, or the application shut down.
 */
export interface LeaderResignedEvent extends LeadershipEventBase {
  /** Why: its handle was stopped, its function returned or threw, or the application shut down. */
  readonly cause: ResignationCause;
  /** How long this instance led, in ms, until the lease was released. */
  readonly duration: number;
}

/** Every leadership event by name; they are lock events too (`on()`, `lock.<name>` as Nest events). */
export interface LeadershipEventMap {
  /** This instance won a term. */
  elected: LeaderElectedEvent;
  /** This instance's term ended because its lease was lost. */
  'leadership-lost': LeadershipLostEvent;
  /** This instance gave up its term. */
  resigned: LeaderResignedEvent;
}
