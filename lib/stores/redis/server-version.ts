import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { RedisClientPort } from './client/redis-client-port.js';

/**
 * The oldest major version of Redis the store's scripts run on: the acquire script takes a free key and reads
 * what holds a taken one in one `SET … NX … GET`, which servers before 7.0 refuse as a syntax error. Valkey
 * reports the Redis version it is compatible with (7.2.x), so it passes.
 */
export const OLDEST_REDIS_MAJOR = 7;

/** One server as the startup check saw it: how messages name it, and its version when INFO told it. */
export interface ServerVersion {
  readonly label: string;
  readonly version: string | undefined;
}

/**
 * The `redis_version` of a server, from its `INFO server`; `undefined` when INFO is refused (an ACL without it,
 * a managed service that hides it) or says none: the first acquire then names the failure itself.
 */
export async function readServerVersion(node: Pick<RedisClientPort, 'info'>): Promise<string | undefined> {
  try {
    return versionIn(await node.info('server'));
  } catch {
    return undefined;
  }
}

/** The `redis_version` line of an `INFO server` reply. */
export function versionIn(info: string): string | undefined {
  return /^redis_version:(\S+)/m.exec(info)?.[1];
}

/**
 * Refuses, at bootstrap, servers too old for the store's scripts, naming each with its version.
 * @param option the option that named the servers (`redis`, `redlock`)
 * @throws LockConfigurationError naming `option`, the old servers and the version needed
 */
export function refuseOldServers(option: string, servers: readonly ServerVersion[]): void {
  const old = servers.filter(
    ({ version }) => version !== undefined && Number.parseInt(version, 10) < OLDEST_REDIS_MAJOR,
  );
  if (old.length === 0) return;
  throw new LockConfigurationError(
    option,
    old.map(({ label, version }) => `Redis ${version} at ${label}`).join(', '),
    `expected Redis ${OLDEST_REDIS_MAJOR}.0 or later, or Valkey: the lock scripts take a key with SET NX GET, which older servers refuse`,
  );
}
