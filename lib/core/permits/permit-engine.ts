import type { LockObserver } from '../events/lock-observer.js';
import type { LockInfo } from '../../interfaces/lock-info.interface.js';
import type { LockStore } from '../../interfaces/lock-store.interface.js';
import type { PermitShape, PermitState } from '../../interfaces/permit-store.interface.js';
import { HeldPermits } from '../held-leases.js';
import type { HoldTimes } from '../hold-times.js';
import { LeaseBook } from '../lease-book.js';
import { decodeHolder } from '../lock-holder.js';
import { PermitAcquirer } from './permit-acquirer.js';
import { PermitLeaseStore } from './permit-lease-store.js';
import { permitStoreOf } from './permit-store-of.js';
import type { ShutdownGate } from '../shutdown-gate.js';

/** What a manager lends its permit engine: the parts its mutex leases use too. */
export interface PermitEngineParts {
  readonly observer: LockObserver;
  readonly shutdown: ShutdownGate;
  readonly holdTimes: HoldTimes;
}

/**
 * A manager's semaphores and readers-writer locks: the acquirer and a lease book of its own, over the
 * permits of the manager's store, made at the first use of a `limit` or `mode` (a store without permits
 * never needs one). Events, hold times and the shutdown are the manager's.
 */
export class PermitEngine {
  readonly leases: LeaseBook;
  readonly acquirer: PermitAcquirer;

  /**
   * @param shape what the first call asks for, for the refusal of a store without permits
   * @throws LockConfigurationError when `lockStore` keeps no permits (no `capabilities.permits`)
   */
  constructor(lockStore: LockStore, shape: PermitShape, { observer, shutdown, holdTimes }: PermitEngineParts) {
    const store = new PermitLeaseStore(permitStoreOf(lockStore, shape), lockStore);
    const gate = shutdown.over(store);
    // permits are not lined up locally (the store's line orders them): no local queues to wake
    const queues = new Map<string, never>();
    this.leases = new LeaseBook({
      store,
      observer,
      queues,
      shutdown: gate,
      holdTimes,
      held: new HeldPermits(),
      waitsHere: (key) => this.acquirer.waitsFor(key),
    });
    this.acquirer = new PermitAcquirer({ store, observer, leases: this.leases, queues, shutdown: gate });
  }
}

/**
 * What `inspect` tells of a key used with permits: held while any permit is, until the longest-lived ends,
 * with that permit's holder, how many hold one, and the key's shape; `undefined` for a key with no permit,
 * waiter or shape (a mutex key, or a free one).
 */
export function permitInfo(state: PermitState): LockInfo | undefined {
  const { held, holders, limit, mode, fence } = state;
  if (holders === 0 && limit === undefined && mode === undefined) return undefined;
  const last = state.permits.at(-1);
  const holder = last && decodeHolder(last.holder);
  return {
    held,
    holders,
    ...(last ? { remainingTtl: last.remainingTtl } : {}),
    ...(fence === undefined ? {} : { fence }),
    ...(holder ? { holder } : {}),
    ...(limit === undefined ? {} : { limit }),
    ...(mode === undefined ? {} : { mode }),
  };
}
