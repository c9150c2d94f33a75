import type { LockStore } from '../interfaces/lock-store.interface.js';
import type { StoreFamily } from '../interfaces/store-family.interface.js';
import { leaseBoundsOf } from '../options/lease-bounds.js';
import { refuseSharedOptions, SHARED_STORE_OPTIONS } from '../options/shared-store-options.js';
import { validateStore } from '../options/validate-options.js';

/** A store given whole (`forRoot({ store })`), which the module uses as it is and never closes. */
export interface GivenStorePlan {
  readonly kind: 'given';
  readonly store: LockStore;
}

/**
 * Any `LockStore` of yours: the module checks that it has the operations of the contract, and checks its
 * default ttl against what the store says it allows; the options that shape a store the module creates
 * belong on your store instead.
 */
export const givenStore = {
  option: 'store',
  expects: 'a LockStore',
  kinds: ['given'],
  plan(options) {
    refuseSharedOptions(
      options,
      SHARED_STORE_OPTIONS,
      'applies to the store the module creates from "redis" or "redlock"; set it on your own store instead',
    );
    return { kind: 'given', store: validateStore(options.store) };
  },
  leaseBounds: (plan) => leaseBoundsOf(plan.store),
  build: async (plan) => ({ store: plan.store, owned: false }),
} satisfies StoreFamily<GivenStorePlan>;
