export * from './errors/index.js';
export type * from './interfaces/index.js';
export { Lock } from './lock.js';
export { LockManager, type LockManagerOptions } from './lock-manager.js';
export { MemoryLockStore } from './stores/memory.store.js';
export { RedisLockStore, type RedisLockStoreOptions } from './stores/redis.store.js';
export type { Duration } from './utils/duration.js';
export type { BackoffOptions } from './utils/backoff.js';
export type { LockSettings } from './utils/lock-settings.js';
