import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from './ioredis-types.js';
import type { GlideClientLike, NodeRedisClientLike } from './redis-client-like.interface.js';
import type { LockDefaults, LockLogger } from './lock-options.interface.js';
import type { LockStore } from './lock-store.interface.js';
import type { RedlockStoreOptions } from './redlock-store-options.interface.js';
import type { LockTelemetryOptions } from './lock-telemetry-options.interface.js';
import type { ReplicaAckOptions } from './replica-ack-options.interface.js';
import type { Duration } from '../utils/duration.js';
import type { EtcdLockStoreOptions } from './etcd-store-options.interface.js';
import type { PostgresLockStoreOptions, PostgresPoolLike } from './postgres-store-options.interface.js';

/**
 * A Redis Cluster for the module to connect to, own and close: its startup nodes and ioredis `ClusterOptions`.
 * Each node connection gets the module's bounded defaults (`commandTimeout` 2 s, one retry) unless
 * `options.redisOptions` says otherwise. With ioredis 6, leave `slotsRefreshInterval` unset: its timer
 * survives `disconnect()` and keeps the process alive.
 * @example { cluster: [{ host: 'redis-0', port: 6379 }], options: { redisOptions: { password } } }
 */
export interface RedisClusterConfig {
  readonly cluster: ClusterNode[];
  readonly options?: ClusterOptions;
}

/**
 * Options of `LockModule.forRoot()` / `forRootAsync()`, all checked at bootstrap before anything connects; an
 * unknown name is refused with the closest known one. Give one of `redis`, `redlock`, `etcd`, `postgres` or `store`; with
 * none of them at all, locks live in this process only (`MemoryLockStore`), with a warning at startup. One of
 * them given as `undefined`, `null` or `''` (an unset variable, most often) is refused.
 */
export interface LockModuleOptions extends LockDefaults {
  /**
   * A quorum over independent Redis nodes (Redlock) instead of one Redis: `{ nodes: [url1, url2, url3] }`
   * (an odd number, at least 3). `keyPrefix`, `releaseNotices`, `handoffWindow` and `acceptEvictionRisk` apply
   * to it too.
   */
  readonly redlock?: Omit<RedlockStoreOptions, 'keyPrefix' | 'releaseNotices' | 'handoffWindow' | 'acceptEvictionRisk'>;
  /**
   * The Redis (or Valkey) to keep locks in: a client you own (never closed by the module): an ioredis or
   * iovalkey `Redis` or `Cluster`, a node-redis 5 or 6 `createClient()` / `createCluster()`, connected or
   * not, or a Valkey GLIDE `GlideClient` / `GlideClusterClient` (docs/stores.md, "Bring your own client"); or a URL / ioredis options / `{ cluster: nodes, options }` from which the module creates and
   * owns a client. Options with `sentinels` and `name` make a Sentinel client, with `failoverDetector` on
   * unless you turn it off: it leaves a frozen or cut-off master as soon as a Sentinel announces a failover.
   * @example { sentinels: [{ host: 'sentinel-0', port: 26379 }], name: 'locks' }
   */
  readonly redis?: Redis | Cluster | NodeRedisClientLike | GlideClientLike | string | RedisOptions | RedisClusterConfig;
  /**
   * An etcd cluster (v3 API) instead of Redis: leases agreed by a quorum, so a failover of the leader loses
   * none (needs the `etcd3` package). `keyPrefix` applies to it too; ttls are whole seconds, at least 1 s.
   * @example { hosts: ['etcd-0:2379', 'etcd-1:2379', 'etcd-2:2379'] }
   */
  readonly etcd?: Omit<EtcdLockStoreOptions, 'keyPrefix'>;
  /**
   * PostgreSQL instead of Redis (needs the `pg` package): a URL, a `pg.Pool` of your own (never closed by the
   * module), or `{ connectionString | pool, directUrl?, table?, schema?, createTable? }`. The tables are
   * created at startup unless `createTable: false`. Through PgBouncer in transaction mode, give `directUrl`
   * (PostgreSQL itself) for the LISTEN connection. `keyPrefix` and `handoffWindow` apply to it too.
   * @example process.env.DATABASE_URL
   * @example { connectionString: 'postgres://app@pgbouncer:6432/app', directUrl: 'postgres://app@db:5432/app' }
   */
  readonly postgres?: string | PostgresPoolLike | Omit<PostgresLockStoreOptions, 'keyPrefix' | 'handoffWindow'>;
  /** Any `LockStore` (e.g. `MemoryLockStore` in tests). A store you pass in is not closed by the module. */
  readonly store?: LockStore;
  /**
   * Namespace of every Redis key and channel: non-empty (lock keys would mix with the application's own),
   * printable (it is in every log line that names a key), without `*?[]\\` (`SCAN MATCH <prefix>*` must find
   * the locks alone) or `{}` (the hash tag that keeps a resource's keys on one Cluster slot). @default 'lock:'
   */
  readonly keyPrefix?: string;
  /** Wake waiters with pub/sub release notices; off leaves them to their backoff. @default true */
  readonly releaseNotices?: boolean;
  /**
   * Hand-off reservation after a contended release, in ms; `0` turns it off. At most half the ttl: a process
   * that died while first in line costs the others one window, which must stay well below a crashed holder's
   * lease. @default 20
   */
  readonly handoffWindow?: number;
  /**
   * Count a grant or renewal only once this many replicas of its master have it (Redis `WAIT`); a grant
   * they do not acknowledge in time is released and fails with `LockStoreError`. Needs `redis`.
   * @default undefined (off)
   * @example { replicas: 1, timeout: 50 }
   */
  readonly replicaAck?: ReplicaAckOptions;
  /**
   * Start even when a Redis server of `redis` or `redlock` may evict keys (`maxmemory` set with a
   * `maxmemory-policy` other than `noeviction`): the startup check then logs a warning instead of failing the
   * bootstrap. An evicted lease lets a second holder in; its holder hears of it (`taken`) at its next renewal.
   * @default false
   */
  readonly acceptEvictionRisk?: boolean;
  /**
   * Check the store at startup (reachable, allowed to run scripts, no server that evicts leases, no Redlock
   * node given twice) and fail the bootstrap if not. @default true
   */
  readonly verifyOnStartup?: boolean;
  /**
   * Register the global `LockInterceptor` that maps lock errors of every transport (HTTP 409/503/400, GraphQL,
   * WebSocket, RPC, BullMQ) and lets key templates read the request; `@WithLock` handlers that Nest runs
   * without global interceptors use it too. Turn off to register your own subclass. @default true
   */
  readonly interceptor?: boolean;
  /**
   * Name the resolved key (`inventory:42`) instead of its template (`inventory:<productId>`) in the bodies of
   * lock errors (409, 503, and every transport's equivalent), in error messages and in log lines. Off by
   * default: a resolved key may carry user data (an e-mail, a tenant) that any client, or any reader of the
   * logs, could then read. `error.key` holds it either way, for code.
   * @default false
   */
  readonly exposeResolvedKeys?: boolean;
  /**
   * On shutdown (`app.close()`, a signal with `enableShutdownHooks()`), how long holders already inside their
   * locked section may go on, their leases still renewed, before the rest are asked to stop (their signals
   * abort with reason `shutdown`). A lease is never ended for them: it stays held until its section ends or
   * the process exits, so no other instance enters before then. New acquisitions and waiters are refused at
   * once (`LockStoreError`: 503). `0` asks at once.
   * @default '5s'
   */
  readonly drainTimeout?: Duration;
  /**
   * Where lost leases, leases that outlive the shutdown's drain and store failures are reported.
   * @default Nest's `Logger` with context 'LockModule'
   */
  readonly logger?: LockLogger;
  /**
   * OpenTelemetry metrics and spans through `@opentelemetry/api`, when the application has it (and an
   * SDK) installed; `false` turns them off. Register the SDK's providers before the application starts:
   * without a provider at bootstrap the service listens to none of its leases (`{ traces: true }` still
   * records spans from a tracer provider registered later).
   * @default true
   */
  readonly telemetry?: boolean | LockTelemetryOptions;
}
