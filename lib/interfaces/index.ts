export type { IdempotencyBaseOptions, IdempotencyOptions, IdempotentOptions } from './idempotent-options.interface.js';
export type { LockInfo } from './lock-info.interface.js';
export type {
  LockContention,
  LockLogger,
  LockOptions,
  LockSectionOptions,
  RetryAfter,
} from './lock-options.interface.js';
export type { LockTelemetryOptions } from './lock-telemetry-options.interface.js';
export type { LockModuleOptions } from './lock-module-options.interface.js';
