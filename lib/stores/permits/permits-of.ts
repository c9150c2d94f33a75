import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { LockStore } from '../../interfaces/lock-store.interface.js';
import type { PermitCapable, PermitShape, PermitStore } from '../../interfaces/permit-store.interface.js';

/** Why a store family keeps no permits, by the class name of its store. */
const WHY_NOT: Readonly<Record<string, string>> = {
  RedlockStore:
    'a quorum of independent Redis nodes cannot count the holders of one key in one atomic step, so it could ' +
    'let in more than the limit (or a writer beside readers)',
  EtcdLockStore: 'the etcd store has no semaphores or readers-writer locks yet',
};

/** Whether a store offers permits (N holders, readers-writer locks) beside its leases. */
export function hasPermits(store: LockStore): store is LockStore & PermitCapable {
  const permits = (store as Partial<PermitCapable>).permits;
  return typeof permits === 'object' && permits !== null && typeof permits.acquire === 'function';
}

/**
 * The permit storage of `store`, for a call or decorator that asks for `shape`; a clear refusal when the store
 * has none, to be thrown at bootstrap (never a weaker lock).
 * @param option the option that asks for permits, with its path (`@WithLock(Export.run).limit`)
 * @throws LockConfigurationError naming the option, the store and why it cannot
 */
export function permitsOf(
  store: LockStore,
  shape: PermitShape,
  option = 'limit' in shape ? 'limit' : 'mode',
): PermitStore {
  if (hasPermits(store)) return store.permits;
  const name = store.constructor?.name ?? 'this store';
  const why = WHY_NOT[name] ?? 'it offers no permits (no `permits` property)';
  throw new LockConfigurationError(
    option,
    'limit' in shape ? shape.limit : shape.mode,
    `${name} cannot keep N-holder or readers-writer locks: ${why}; use RedisLockStore (one Redis, Sentinel or ` +
      'Cluster) or MemoryLockStore for these keys',
  );
}
