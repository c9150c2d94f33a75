import type { FactoryProvider } from '@nestjs/common';
import type { LockStore } from './interfaces/lock-store.interface.js';
import { LOCK_STORE } from './lock.constants.js';
import { LOCK_MODULE_OPTIONS } from './lock.module-definition.js';
import { checkModuleOptions, type CheckedModuleOptions } from './lock.module-options.js';
import { createStore } from './stores/registry.js';

/** Injection token of the module's options, checked. @internal */
export const LOCK_CHECKED_OPTIONS = Symbol('nestjs-lock:checked-options');

/** The stores this module built itself, and so closes at shutdown; a store given or overridden is never closed. */
const storesMadeHere = new WeakSet<LockStore>();

/** Whether the module built `store` (from a store family's option, or none) and must close it. @internal */
export function isMadeByModule(store: LockStore): boolean {
  return storesMadeHere.has(store);
}

/**
 * Checks the module options (what `forRoot()` got, or what the `forRootAsync()` factory returned): every
 * option is refused before a connection or a timer exists. @internal
 */
export const checkedOptionsProvider: FactoryProvider<CheckedModuleOptions> = {
  provide: LOCK_CHECKED_OPTIONS,
  inject: [LOCK_MODULE_OPTIONS],
  useFactory: (options: unknown) => checkModuleOptions(options),
};

/**
 * Builds the store the checked options ask for, under {@link LOCK_STORE}, by its family (see
 * `stores/registry.ts`), which loads the package it needs (ioredis, etcd3) only then. A test that overrides
 * `LOCK_STORE` builds nothing here. @internal
 */
export const lockStoreProvider: FactoryProvider<Promise<LockStore>> = {
  provide: LOCK_STORE,
  inject: [LOCK_CHECKED_OPTIONS],
  useFactory: async (options: CheckedModuleOptions) => {
    const { store, owned } = await createStore(options.store);
    if (owned) storesMadeHere.add(store);
    return store;
  },
};
