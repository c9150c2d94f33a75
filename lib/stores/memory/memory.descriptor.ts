import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../../interfaces/lock-module-options.interface.js';
import type { StoreFamily } from '../../interfaces/store-family.interface.js';
import { validateBoolean, validateInteger, validateKeyPrefix } from '../../options/validate-options.js';
import { MAX_DURATION } from '../../utils/duration.js';
import { MemoryLockStore } from './memory.store.js';

/** The memory store the module falls back to; the hand-off window given, which the default ttl must allow. */
export interface MemoryStorePlan {
  readonly kind: 'memory';
  readonly handoffWindow?: number;
}

/** What the module says at startup when it keeps locks in memory because no store was configured. */
const MEMORY_STORE_WARNING =
  'No lock store configured (redis, redlock or store): locks are held in this process only (MemoryLockStore), ' +
  'so other instances of this application do not see them and can hold the same lock at once. Configure ' +
  '"redis" for distributed locks, or pass store: new MemoryLockStore() to say in-process locks are intended.';

/**
 * Locks in this process only: what the module builds when no option selects a store, with a warning at
 * startup (`store: new MemoryLockStore()` says it is meant, and warns of nothing).
 */
export const memoryFamily = {
  kinds: ['memory'],
  warning: MEMORY_STORE_WARNING,
  plan: planMemoryStore,
  leaseBounds: (plan) => ({ store: 'MemoryLockStore', handoffWindow: plan.handoffWindow }),
  build: async () => ({ store: new MemoryLockStore(), owned: true }),
} satisfies StoreFamily<MemoryStorePlan>;

function planMemoryStore(options: LockModuleOptions): MemoryStorePlan {
  if (options.replicaAck !== undefined) {
    throw new LockConfigurationError(
      'replicaAck',
      options.replicaAck,
      'replicas only exist on Redis: give "redis" too (for your own store, set it on the store)',
    );
  }
  // the memory store has no prefix nor window; checked all the same, for the day "redis" is given
  validateKeyPrefix(options.keyPrefix ?? 'lock:');
  const handoffWindow =
    options.handoffWindow == null
      ? undefined
      : validateInteger('handoffWindow', options.handoffWindow, 0, MAX_DURATION);
  validateBoolean('releaseNotices', options.releaseNotices ?? true);
  validateBoolean('acceptEvictionRisk', options.acceptEvictionRisk ?? false);
  return { kind: 'memory', ...(handoffWindow === undefined ? {} : { handoffWindow }) };
}
