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
  const options: LockModuleOptions = {
    keyPrefix: connection.keyPrefix,
    ...(connection.redis === undefined ? {} : { redis: connection.redis, releaseNotices: false }),
    ...(connection.postgres === undefined
      ? {}
      : { postgres: { connectionString: connection.postgres, createTable: false } }),
    ...(connection.etcd === undefined ? {} : { etcd: { hosts: connection.etcd } }),
  };
  return (await createStore(planStore(options))).store;
}
