import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { LockStore } from '../../interfaces/lock-store.interface.js';
import type { PermitShape, PermitStore } from '../../interfaces/permit-store.interface.js';

/**
 * The permit storage of `store` (its `capabilities.permits`), for a call or decorator that asks for `shape`; a
 * clear refusal when the store has none, to be thrown at bootstrap (never a weaker lock).
 * @param option the option that asks for permits, with its path (`@WithLock(Export.run).limit`)
 * @throws LockConfigurationError naming the option, the store and why it cannot (`capabilities.absent.permits`)
 */
export function permitStoreOf(
  store: LockStore,
  shape: PermitShape,
  option = 'limit' in shape ? 'limit' : 'mode',
): PermitStore {
  const { permits, absent } = store.capabilities ?? {};
  if (permits) return permits;
  const name = (store.constructor as { name?: string } | undefined)?.name ?? 'this store';
  const why = absent?.permits ?? 'it offers no permits (no `capabilities.permits`)';
  throw new LockConfigurationError(
    option,
    'limit' in shape ? shape.limit : shape.mode,
    `${name} cannot keep N-holder or readers-writer locks: ${why}`,
  );
}
