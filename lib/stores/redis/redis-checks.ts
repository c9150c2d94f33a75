import type { RedisClientPort } from './client/redis-client-port.js';
import { isOne } from './client/reply.js';
import type { LockStoreHealth, LockStoreVerification } from '../../interfaces/lock-store.interface.js';
import { isCluster } from './client/port-settings.js';
import { clusterMasters } from './cluster-client.js';
import { ConnectionWatch, describeConnectionFailure } from './connection-failure.js';
import { checkEviction, judgeEviction, type EvictionCheck } from './eviction-policy.js';
import { labelOfServer } from './node-label.js';
import { PERMIT_SCRIPTS } from './permits/scripts/index.js';
import { ALL_SCRIPTS } from './scripts/index.js';
import type { LuaScript } from './scripts/lua-script.js';
import { readServerVersion, refuseOldServers } from './server-version.js';
import { errorMessage, redisStoreError } from './store-error.js';

/** The scripts a Redis store runs: its leases' and its permits' (same keys, same servers). */
export const STORE_SCRIPTS: readonly LuaScript[] = [...ALL_SCRIPTS, ...PERMIT_SCRIPTS];

/** What {@link verifyRedis} needs to know of the store besides its client. */
export interface RedisVerifyOptions {
  /** Warn instead of failing for a server that may evict leases (the store option of that name). */
  readonly acceptEvictionRisk: boolean;
  /** The store's watch of a client it owns; a client of yours is watched only while it is checked. */
  readonly connection?: ConnectionWatch;
}

/**
 * Checks that a Redis store can work: loads every script (its permits' too) (proving the connection and the user's right to
 * run scripts), then reads each server's `maxmemory` and `maxmemory-policy`. On a Cluster it does so on
 * every master, after a PING, naming the node that fails; replicas are not checked (a promoted replica is
 * sent the script again on its first NOSCRIPT).
 * @returns a warning for a server that may evict leases when `acceptEvictionRisk` is set, and one for the
 * servers whose policy could not be read (CONFIG GET refused)
 * @throws LockConfigurationError naming each server that may evict leases, its policy and the fix
 * @throws LockStoreError naming the missing permission or the node that does not answer
 */
export async function verifyRedis(
  client: RedisClientPort,
  options: RedisVerifyOptions,
): Promise<LockStoreVerification> {
  const checks: EvictionCheck[] = [];
  if (!isCluster(client)) {
    await verifyServer(client, options.connection);
    refuseOldServers('redis', [{ label: labelOfServer(client), version: await readServerVersion(client) }]);
    checks.push(await checkEviction(client, labelOfServer(client)));
  } else {
    for (const master of await clusterMasters(client)) {
      const address = `${master.options.host}:${master.options.port}`;
      try {
        await master.ping();
      } catch (error) {
        const reason = describeConnectionFailure(error, master.options.commandTimeout) ?? errorMessage(error);
        throw redisStoreError('reach', undefined, error, `master ${address} does not answer PING (${reason})`);
      }
      await loadScripts(master, ` on master ${address}`);
      refuseOldServers('redis', [{ label: `master ${address}`, version: await readServerVersion(master) }]);
      checks.push(await checkEviction(master, `master ${address}`));
    }
  }
  return { warnings: judgeEviction(checks, options) };
}

/**
 * Asks every server (each master of a Cluster) which of the scripts it has cached, in one round trip
 * each, and loads the missing ones again, so the next lock operation needs no resend.
 * @throws LockStoreError when a server does not answer or may not load scripts
 */
export async function redisHealth(client: RedisClientPort): Promise<LockStoreHealth> {
  const nodes = isCluster(client) ? client.nodes('master') : [client];
  let reloaded = 0;
  try {
    for (const node of nodes) {
      const cached = (await node.script('EXISTS', ...STORE_SCRIPTS.map((script) => script.sha))) as number[];
      for (const [index, script] of STORE_SCRIPTS.entries()) {
        if (isOne(cached[index])) continue;
        await node.script('LOAD', script.lua);
        reloaded++;
      }
    }
  } catch (error) {
    const detail = /NOPERM/.test(errorMessage(error))
      ? `the Redis user may not check or load scripts (${errorMessage(error)}); grant it +script|exists +script|load`
      : errorMessage(error);
    throw redisStoreError('check its health', undefined, error, detail);
  }
  return { scriptsLoaded: true, ...(reloaded > 0 ? { scriptsReloaded: reloaded } : {}) };
}

/**
 * Loads the scripts on a single server; when it cannot be reached, says which one (`host:port`, never
 * credentials) and why (`ECONNREFUSED`, a timeout, `NOAUTH`, `WRONGPASS`), which ioredis reports only
 * through its `error` events.
 */
async function verifyServer(client: RedisClientPort, watched: ConnectionWatch | undefined): Promise<void> {
  // on a client of yours, listen only while checking: a listener of ours would silence ioredis' own warning
  const connection = watched ?? new ConnectionWatch(client);
  try {
    await loadScripts(client, ` on ${labelOfServer(client)}`, connection);
  } finally {
    if (connection !== watched) connection.stop();
  }
}

/** Loads every script on `node`; `where` names it in messages, `connection` tells why it cannot be reached. */
async function loadScripts(node: RedisClientPort, where: string, connection?: ConnectionWatch): Promise<void> {
  // sent together, one round trip for all: one each made a distant server's startup check last seconds
  const outcomes = await Promise.allSettled(STORE_SCRIPTS.map((script) => node.script('LOAD', script.lua)));
  const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed === undefined) return;
  const error: unknown = failed.reason;
  const cause = connection ? await connection.settledCauseOf(error) : error;
  const unreachable = describeConnectionFailure(cause, node.options.commandTimeout);
  if (unreachable !== undefined) {
    throw redisStoreError(`reach Redis at ${labelOfServer(node)}`, undefined, cause, unreachable);
  }
  const detail = /NOPERM/.test(errorMessage(error))
    ? `the Redis user may not run scripts${where} (${errorMessage(error)}); grant it +evalsha +eval +script|load, or +@scripting`
    : `${errorMessage(error)}${where}`;
  throw redisStoreError('load its Lua scripts', undefined, error, detail);
}
