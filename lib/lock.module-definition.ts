import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LockModuleOptions } from './interfaces/lock-module-options.interface.js';

/** Extra options of `forRoot` / `forRootAsync` that shape the module itself rather than the locks. */
export interface LockModuleExtras {
  /** Register the module globally, so every module can inject `LockService`. @default false */
  readonly isGlobal?: boolean;
}

export const {
  ConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: LOCK_MODULE_OPTIONS,
  OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<LockModuleOptions>({ moduleName: 'Lock' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createLockOptions')
  .setExtras<LockModuleExtras>({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();
