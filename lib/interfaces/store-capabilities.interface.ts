import type { LeaseLimits } from './lease-limits.interface.js';
import type { LockListing, LockRevoking } from './lock-listing.interface.js';
import type { PermitStore } from './permit-store.interface.js';
import type { ResponseRecords } from './response-records.interface.js';
import type { WaitingLine } from './waiting-line.interface.js';

/**
 * What a store may offer beyond the lease, each an object of its own: the engine asks for a capability, never
 * for a store's class. A store leaves out what it does not offer, and may say why in `absent`.
 */
export interface LockStoreCapabilities {
  /** Its rules for ttls (least lease, drift, hand-off window, keeps); without them, the manager's defaults. */
  readonly limits?: LeaseLimits;
  /** Its line of waiting processes per key: hand-overs, direct grants, places given up. */
  readonly line?: WaitingLine;
  /** N-holder semaphores and readers-writer locks on the same keys, fences and notices as its leases. */
  readonly permits?: PermitStore;
  /** Records kept for a ttl beside the leases: the responses `@Idempotent()` replays. */
  readonly records?: ResponseRecords;
  /** The held keys, page by page, and how many wait for each: what `LockService.list` shows an operator. */
  readonly listing?: LockListing;
  /** A forced release that raises the key's fence, for an operator who must free a stuck lock. */
  readonly revoking?: LockRevoking;
  /**
   * Why the store lacks a capability, for the refusal of a call that needs it ("a quorum of independent Redis
   * nodes cannot count the holders of one key in one atomic step ...").
   */
  readonly absent?: Readonly<Partial<Record<LockStoreCapabilityName, string>>>;
}

/** The name of a capability a store may offer. */
export type LockStoreCapabilityName = Exclude<keyof LockStoreCapabilities, 'absent'>;
