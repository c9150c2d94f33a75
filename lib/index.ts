// What a Nest application writes: the module, service, decorators, errors, option types, the stores it
// constructs and the events it handles. What a store implements is in `nestjs-lock/store`.
export { LockModule } from './lock.module.js';
export { LockService } from './lock.service.js';
export * from './decorators/index.js';
export { LockInterceptor } from './lock.interceptor.js';
export { LOCK_STORE } from './lock.constants.js';
export * from './errors/index.js';
export type * from './interfaces/index.js';
export type { Duration } from './utils/duration.js';
export { Lock } from './core/lock.js';
export { LockManager, type LockManagerOptions } from './core/lock-manager.js';
export { Leadership } from './leadership/leadership.js';
export type { LeaderInfo } from './leadership/leader-info.js';
export { lockErrorPayload, type LockErrorPayload } from './transports/lock-error-payload.js';
export type { LockEvent, LockEventListener, LockEventMap, LockEventName } from './core/events/lock-events.js';
export { LockTelemetry } from './telemetry/lock-telemetry.js';
export { LOCK_METRICS } from './telemetry/lock-metrics.js';
export { checkLockStore } from './health/check-lock-store.js';
export { MemoryLockStore } from './stores/memory/memory.store.js';
export { RedisLockStore, type RedisLockStoreOptions } from './stores/redis/redis.store.js';
export { RedlockStore, type RedlockStoreOptions } from './stores/redlock/redlock.store.js';
export { EtcdLockStore, type EtcdLockStoreOptions } from './stores/etcd/index.js';
export { PostgresLockStore, type PostgresLockStoreOptions } from './stores/postgres/index.js';
