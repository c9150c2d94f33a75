import { Redis } from 'ioredis';
import type { LockStore } from '../../lib/interfaces/lock-store.interface.js';
import type { PermitStore } from '../../lib/interfaces/permit-store.interface.js';
import { MemoryLockStore } from '../../lib/stores/memory/memory.store.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import { testRedisUrl, uniquePrefix } from './stores.js';

/** A lock store that keeps permits (its `capabilities.permits`), and how to close it. */
export interface CapableStore {
  readonly store: LockStore & { readonly capabilities: { readonly permits: PermitStore } };
  close(): Promise<void>;
}

/** A factory of fresh permit-capable stores of one kind. */
export interface CapableStoreKind {
  readonly name: string;
  create(): Promise<CapableStore>;
}

export const memoryCapableKind: CapableStoreKind = {
  name: 'MemoryLockStore',
  async create() {
    const store = new MemoryLockStore();
    return { store, close: () => store.close() };
  },
};

export const redisCapableKind: CapableStoreKind = {
  name: 'RedisLockStore',
  async create() {
    const store = new RedisLockStore({
      client: new Redis(testRedisUrl()),
      keyPrefix: uniquePrefix(),
      ownsClient: true,
    });
    return { store, close: () => store.close() };
  },
};
