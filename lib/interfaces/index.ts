export type {
  AcquireRequest,
  AcquireResult,
  LeaseRenewal,
  LockState,
  LockStore,
  ReleaseWatch,
} from './lock-store.interface.js';
export type { LockDefaults, LockLogger, LockOptions } from './lock-options.interface.js';
export type { LockModuleOptions, RedisClusterConfig } from './lock-module-options.interface.js';
