import type { FactoryProvider } from '@nestjs/common';
import type { LockStore } from './interfaces/lock-store.interface.js';
import { LOCK_MODULE_OPTIONS } from './lock.module-definition.js';
import { createStore } from './stores/create-store.js';
import { checkModuleOptions, type CheckedModuleOptions } from './options/module-options.js';

/** Injection token of the module's checked options and the store built from them. @internal */
export const LOCK_MODULE_STORE = Symbol('nestjs-lock:module-store');

/**
 * The module's options, checked, and its store. Not in the barrel, yet kept in the published `.d.ts`
 * because `LockService`'s constructor takes it.
 */
export interface ModuleStore {
  readonly options: CheckedModuleOptions;
  readonly store: LockStore;
  /** Whether the module made the store, and closes it at shutdown. */
  readonly owned: boolean;
}

/**
 * Checks the module options (what `forRoot()` got, or what the `forRootAsync()` factory returned), then
 * builds the store: every option is refused before a connection or a timer exists, and `ioredis` is loaded
 * only when a Redis store is built. @internal
 */
export const lockStoreProvider: FactoryProvider<Promise<ModuleStore>> = {
  provide: LOCK_MODULE_STORE,
  inject: [LOCK_MODULE_OPTIONS],
  useFactory: async (options: unknown) => {
    const checked = checkModuleOptions(options);
    return { options: checked, ...(await createStore(checked.store)) };
  },
};
