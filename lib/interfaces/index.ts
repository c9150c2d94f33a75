export type {
  AcquireRequest,
  AcquireResult,
  DirectGrant,
  HandOverResult,
  LeaseRenewal,
  LockState,
  LockStore,
  LockStoreHealth,
  LockStoreVerification,
  ReleaseWatch,
} from './lock-store.interface.js';
export type { LockHolder, LockInfo } from './lock-info.interface.js';
export type {
  LockContention,
  LockDefaults,
  LockLogger,
  LockOptions,
  LockSectionOptions,
  RetryAfter,
} from './lock-options.interface.js';
export type { LockTelemetryOptions } from './lock-telemetry-options.interface.js';
export type { LockModuleOptions, RedisClusterConfig } from './lock-module-options.interface.js';
export type {
  PermitCapable,
  PermitConflict,
  PermitGrant,
  PermitHolderState,
  PermitMode,
  PermitRefusal,
  PermitRequest,
  PermitResult,
  PermitShape,
  PermitState,
  PermitStore,
} from './permit-store.interface.js';
