import { LockStoreError } from '../errors/lock-store.error.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';

/** The refusal of an acquisition while the service shuts down: a store failure to the caller (HTTP 503). */
export function shuttingDownError(key: string): LockStoreError {
  return new LockStoreError('acquire', key, undefined, SHUTTING_DOWN);
}

const SHUTTING_DOWN = 'the lock service is shutting down';

/** Whether `error` refused an acquisition because its service shuts down (the store itself may be fine). */
export function isShutdownRefusal(error: LockStoreError): boolean {
  return error.detail === SHUTTING_DOWN;
}

/** What every gate of one manager shares: whether its shutdown began, and its unanswered store calls. */
interface GateState {
  begun: boolean;
  readonly pending: Set<Promise<unknown>>;
  /** Calls counted by `enter`/`leave` (the hot path: no promise of its own per call). */
  inFlight: number;
  /** Who waits for `inFlight` to reach 0. */
  readonly idle: Array<() => void>;
}

/**
 * What a manager's shutdown must know of its store calls: whether it has begun (from then on nothing new is
 * granted, and a grant still on its way is given back), and which calls are unanswered (the store is closed
 * only after them).
 */
export class ShutdownGate {
  /** Store calls that a shutdown must see answered before it closes the store, among them. */
  private readonly state: GateState;

  constructor(
    private readonly store: LockStore,
    state?: GateState,
  ) {
    this.state = state ?? { begun: false, pending: new Set(), inFlight: 0, idle: [] };
  }

  /** This gate for another store of the same manager (its permits): one shutdown, one set of pending calls. */
  over(store: LockStore): ShutdownGate {
    return new ShutdownGate(store, this.state);
  }

  /** Set the moment `close()` is called, before anything is released: from then on nothing new is granted. */
  get begun(): boolean {
    return this.state.begun;
  }

  /** The shutdown starts: every grant from now on is refused. */
  begin(): void {
    this.state.begun = true;
  }

  /** Keeps `call` among the pending calls until it settles. */
  track<T>(call: Promise<T>): Promise<T> {
    const { pending } = this.state;
    pending.add(call);
    const settled = (): void => void pending.delete(call);
    call.then(settled, settled);
    return call;
  }

  /**
   * A store call is on its way, or an acquisition under way; `leave()` once it is answered (an acquisition:
   * once it ended, its place in the store's line given up), whatever the answer. What `track` does for a
   * promise, without one: every acquisition and every release pass here.
   */
  enter(): void {
    this.state.inFlight++;
  }

  /** A call or acquisition counted by `enter` is over. */
  leave(): void {
    const { state } = this;
    if (--state.inFlight > 0) return;
    for (const resolve of state.idle.splice(0)) resolve();
  }

  /** Resolves once every tracked or entered call is answered, those made while it waits included. */
  async answered(): Promise<void> {
    const { state } = this;
    for (;;) {
      if (state.pending.size > 0) await Promise.allSettled([...state.pending]);
      else if (state.inFlight > 0) await new Promise<void>((resolve) => state.idle.push(resolve));
      else return;
    }
  }

  /** Releases a grant that came while the service shuts down; returns the refusal for its caller. */
  async refuseGrant(key: string, token: string): Promise<LockStoreError> {
    await this.track(this.store.release(key, token)).catch(() => false);
    return shuttingDownError(key);
  }
}
