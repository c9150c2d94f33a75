import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../interfaces/lock-module-options.interface.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import { createStore, planStore } from '../stores/registry.js';

/** The connection flags of the CLI, as given. */
export interface CliConnection {
  readonly redis?: string;
  readonly postgres?: string;
  /** etcd members, comma-separated (`host1:2379,host2:2379`). */
  readonly etcd?: string;
  readonly keyPrefix: string;
}

/**
 * The store the CLI reads, planned from its flags by the same store families as `LockModule.forRoot` (so the
 * same checks and messages: two connections given, a bad URL, an empty host list). It sends no release notices
 * and never creates the Postgres tables: an operator's look leaves the application's database as it was.
 * @throws LockConfigurationError when no connection, or more than one, is given, or one cannot work
 */
export async function connectStore(connection: CliConnection): Promise<LockStore> {
  if (connection.redis === undefined && connection.postgres === undefined && connection.etcd === undefined) {
    throw new LockConfigurationError('--redis', undefined, 'give one of --redis URL, --postgres URL or --etcd hosts');
  }
  const redis = connection.redis === undefined ? undefined : await redisClientFor(connection.redis);
  const options: LockModuleOptions = {
    keyPrefix: connection.keyPrefix,
    ...(connection.redis === undefined
      ? {}
      : { redis: (redis ?? connection.redis) as LockModuleOptions['redis'], releaseNotices: false }),
    ...(connection.postgres === undefined
      ? {}
      : { postgres: { connectionString: connection.postgres, createTable: false } }),
    ...(connection.etcd === undefined ? {} : { etcd: { hosts: connection.etcd } }),
  };
  const { store } = await createStore(planStore(options));
  if (!redis) return store;
  // the store leaves a client it was given open: the CLI's own goes with it
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    await redis.close().catch(() => undefined);
  };
  return store;
}

/** The part of a node-redis client the CLI uses beyond the store's. */
interface NodeRedisClient {
  on(event: 'error', listener: () => void): unknown;
  close(): Promise<unknown>;
}

/**
 * A node-redis client of `url` for an application that has node-redis and not ioredis (with which the module
 * makes its own client of a URL); `undefined` when ioredis can be loaded, or node-redis cannot either (the
 * module then says to install ioredis). Not connected: the store connects it at its first command, and a
 * failed connection is not tried again (the CLI reports it).
 */
async function redisClientFor(url: string): Promise<NodeRedisClient | undefined> {
  if (
    await import('ioredis').then(
      () => true,
      () => false,
    )
  )
    return undefined;
  const nodeRedis = await import('redis').catch(() => undefined);
  if (!nodeRedis) return undefined;
  const client = nodeRedis.createClient({ url, socket: { connectTimeout: 2000, reconnectStrategy: false } });
  // failures reach the CLI through the store's commands; an unhandled 'error' event would end it first
  client.on('error', () => undefined);
  return client;
}
