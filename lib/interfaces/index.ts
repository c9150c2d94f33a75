export type { IdempotencyOptions, IdempotentOptions } from './idempotent-options.interface.js';
export type { LockInfo } from './lock-info.interface.js';
export type { LockContention, LockLogger, LockOptions } from './lock-options.interface.js';
export type { LockModuleOptions } from './lock-module-options.interface.js';
export type { LockOptionsFactory } from './lock-options-factory.interface.js';
