export * from './errors/index.js';
export * from './decorators/index.js';
export type * from './interfaces/index.js';
export { Lock } from './core/lock.js';
export { LockManager, type LockManagerOptions } from './core/lock-manager.js';
export {
  LOCK_EVENT_NAMES,
  type LockAcquiredEvent,
  type LockContendedEvent,
  type LockEventBase,
  type LockEventListener,
  type LockEventMap,
  type LockEventName,
  type LockExtendedEvent,
  type LockLateGrantEvent,
  type LockLostEvent,
  type LockOutlivedDrainEvent,
  type LockReleasedEvent,
  type LockRenewedEvent,
  type LockSkippedEvent,
  type LockStoreErrorEvent,
  type LockStoreOperation,
  type LockWaitedEvent,
} from './core/events/lock-events.js';
export { Leadership, type LeaderLease } from './leadership/leadership.js';
export type { LeadershipHandle } from './leadership/leadership-handle.js';
export type { LeaderInfo } from './leadership/leader-info.js';
export { leaderKey } from './leadership/leader-key.js';
export type {
  LeaderElectedEvent,
  LeaderResignedEvent,
  LeadershipEventBase,
  LeadershipEventMap,
  LeadershipLostEvent,
  ResignationCause,
} from './leadership/leadership-events.js';
export { LockModule } from './lock.module.js';
export { LOCK_MODULE_OPTIONS, type LockModuleExtras } from './lock.module-definition.js';
export { LockService } from './lock.service.js';
export { LOCK_STORE } from './lock.constants.js';
export { LockInterceptor } from './lock.interceptor.js';
export {
  lockErrorPayload,
  type LockErrorPayload,
  type LockErrorPayloadCode,
  type LockErrorPayloadOptions,
} from './transports/lock-error-payload.js';
export type { LockKeySpec } from './decorators/locked-method.js';
export type { GraphQLFieldInfo, GraphQLResponsePath } from './transports/graphql.transport.js';
export type { DelayableJob } from './transports/queue.transport.js';
export { checkLockStore, type LockStoreCheckOptions, type LockStoreStatus } from './health/check-lock-store.js';
export { LOCK_INSTRUMENTATION_SCOPE, LOCK_METRICS } from './telemetry/lock-metrics.js';
export { LockTelemetry } from './telemetry/lock-telemetry.js';
export { MemoryLockStore } from './stores/memory/memory.store.js';
export { MemoryPermitStore, type MemoryPermitStoreOptions } from './stores/memory/memory-permit-store.js';
export { RedisPermitStore, type RedisPermitStoreOptions } from './stores/redis/permits/redis-permit-store.js';
export { RedisLockStore, type RedisLockStoreOptions } from './stores/redis/redis.store.js';
export { RedlockStore, type RedlockNode, type RedlockStoreOptions } from './stores/redlock/redlock.store.js';
export type { ReplicaAckOptions } from './interfaces/replica-ack-options.interface.js';
export { EtcdLockStore, MIN_ETCD_TTL, type Etcd3ClientLike, type EtcdLockStoreOptions } from './stores/etcd/index.js';
export {
  PostgresLockStore,
  advisoryLockId,
  advisoryTransactionLock,
  type AdvisoryLockClient,
  type AdvisoryTransactionLockOptions,
  type PostgresClientLike,
  type PostgresLockStoreOptions,
  type PostgresPoolClientLike,
  type PostgresPoolLike,
  type PostgresQueryResult,
} from './stores/postgres/index.js';
export type { Duration } from './utils/duration.js';
export type { BackoffOptions } from './utils/backoff.js';
