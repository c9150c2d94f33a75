import type { Cluster, Redis } from '../interfaces/ioredis-types.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import { loadIoredis } from './redis/load-ioredis.js';
import { MemoryLockStore } from './memory/memory.store.js';
import { RedisLockStore } from './redis/redis.store.js';
import type { RedisStoreSettings } from './redis/redis-store-options.js';
import { RedlockStore } from './redlock/redlock.store.js';
import { EtcdLockStore } from './etcd/etcd-lock-store.js';
import { OWNED_CLIENT_DEFAULTS } from '../options/redis-store-plan.js';
import type { StorePlan } from '../options/store-plan.js';

/** The store the module options ask for, and whether the module must close it. */
export interface CreatedStore {
  readonly store: LockStore;
  /** Whether the module made it (and closes it); a store or client you pass in is never closed. */
  readonly owned: boolean;
}

/**
 * Builds the store of a checked plan (see `checkModuleOptions`). `ioredis` is loaded here, and only for a
 * Redis store the module connects itself, so an application without it can use the memory store or its own.
 * @throws LockConfigurationError when ioredis is needed and not installed
 */
export async function createStore(plan: StorePlan): Promise<CreatedStore> {
  switch (plan.kind) {
    case 'given':
      return { store: plan.store, owned: false };
    case 'memory':
      return { store: new MemoryLockStore(), owned: true };
    case 'redlock':
      return { store: new RedlockStore(plan.options), owned: true };
    case 'etcd':
      return { store: new EtcdLockStore(plan.options), owned: true };
    case 'client':
      // the client stays the user's: the store is ours to close, and leaves the client open
      return { store: new RedisLockStore({ client: plan.client, ...plan.settings }), owned: true };
    case 'url': {
      const { Redis: Client } = await loadIoredis('redis', plan.url);
      return owned(new Client(plan.url, OWNED_CLIENT_DEFAULTS), plan.settings);
    }
    case 'options': {
      const { Redis: Client } = await loadIoredis('redis', plan.options);
      return owned(new Client(plan.options), plan.settings);
    }
    case 'cluster': {
      const { Cluster: ClusterClient } = await loadIoredis('redis', plan.nodes);
      return owned(new ClusterClient(plan.nodes, plan.options), plan.settings);
    }
  }
}

function owned(client: Redis | Cluster, settings: RedisStoreSettings): CreatedStore {
  // a client we make is ours to close; errors surface through commands (the store also listens, to explain
  // them), never as unhandled 'error' events, even one emitted after the store closed
  client.on('error', () => undefined);
  return { store: new RedisLockStore({ client, ...settings, ownsClient: true }), owned: true };
}
