export type { AcquireRequest, AcquireResult, LeaseRenewal, LockState, ReleaseWatch } from './lease.interface.js';
export type { LeaseLimits } from './lease-limits.interface.js';
export type { LockStore, LockStoreHealth, LockStoreVerification } from './lock-store.interface.js';
export type { LockStoreCapabilities, LockStoreCapabilityName } from './store-capabilities.interface.js';
export type { IdempotencyBaseOptions, IdempotencyOptions, IdempotentOptions } from './idempotent-options.interface.js';
export type { ResponseRecords } from './response-records.interface.js';
export type { DirectGrant, HandOverResult, WaitingLine } from './waiting-line.interface.js';
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
