import { LockStoreError } from '../errors/lock-store.error.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';

/** The refusal of an acquisition while the service shuts down: a store failure to the caller (HTTP 503). */
export function shuttingDownError(key: string): LockStoreError {
  return new LockStoreError('acquire', key, undefined, 'the lock service is shutting down');
}

/**
 * What a manager's shutdown must know of its store calls: whether it has begun (from then on nothing new is
 * granted, and a grant still on its way is given back), and which calls are unanswered (the store is closed
 * only after them).
 */
export class ShutdownGate {
  #begun = false;
  /** Store calls that a shutdown must see answered before it closes the store. */
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly store: LockStore) {}

  /** Set the moment `close()` is called, before anything is released: from then on nothing new is granted. */
  get begun(): boolean {
    return this.#begun;
  }

  /** The shutdown starts: every grant from now on is refused. */
  begin(): void {
    this.#begun = true;
  }

  /** Keeps `call` among the pending calls until it settles. */
  track<T>(call: Promise<T>): Promise<T> {
    this.pending.add(call);
    const settled = (): void => void this.pending.delete(call);
    call.then(settled, settled);
    return call;
  }

  /** Resolves once every tracked call is answered, those tracked while it waits included. */
  async answered(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Releases a grant that came while the service shuts down; returns the refusal for its caller. */
  async refuseGrant(key: string, token: string): Promise<LockStoreError> {
    await this.track(this.store.release(key, token)).catch(() => false);
    return shuttingDownError(key);
  }
}
