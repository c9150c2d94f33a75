import { Redis } from 'ioredis';
import type { LockStore } from '../../lib/interfaces/lock-store.interface.js';
import type { PermitCapable, PermitStore } from '../../lib/interfaces/permit-store.interface.js';
import { MemoryLockStore } from '../../lib/stores/memory/memory.store.js';
import { MemoryPermitStore } from '../../lib/stores/permits/memory-permit-store.js';
import { hasPermits } from '../../lib/stores/permits/permits-of.js';
import { RedisPermitStore } from '../../lib/stores/permits/redis-permit-store.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import { testRedisUrl, uniquePrefix } from './stores.js';

/** `store` with `permits` as its permit storage, unless it already has its own. */
export function withPermits<S extends LockStore>(store: S, permits: PermitStore): S & PermitCapable {
  return hasPermits(store) ? store : Object.assign(store, { permits });
}

/** A lock store that keeps permits, and how to close both. */
export interface CapableStore {
  readonly store: LockStore & PermitCapable;
  close(): Promise<void>;
}

/** A factory of fresh permit-capable stores of one kind. */
export interface CapableStoreKind {
  readonly name: string;
  create(): Promise<CapableStore>;
}

/** What closes `store` and, when they were added beside it, its permits. */
function capable(store: LockStore, permits: PermitStore): CapableStore {
  const added = !hasPermits(store);
  const both = withPermits(store, permits);
  return {
    store: both,
    async close() {
      await Promise.all([store.close(), added ? permits.close() : undefined]);
    },
  };
}

export const memoryCapableKind: CapableStoreKind = {
  name: 'MemoryLockStore',
  async create() {
    const store = new MemoryLockStore();
    const fences = (store as unknown as { fences: Map<string, number> }).fences;
    return capable(store, new MemoryPermitStore({ mutex: store, fences }));
  },
};

export const redisCapableKind: CapableStoreKind = {
  name: 'RedisLockStore',
  async create() {
    const keyPrefix = uniquePrefix();
    const url = testRedisUrl();
    const store = new RedisLockStore({ client: new Redis(url), keyPrefix, ownsClient: true });
    return capable(store, new RedisPermitStore({ client: new Redis(url), keyPrefix, ownsClient: true }));
  },
};
