import type { RedisClientPort, RedisClusterPort } from './redis-client-port.js';

/** Whether the client is an ioredis `Cluster` (every command then routes by its keys' hash slot). */
export function isCluster(client: RedisClientPort): client is RedisClusterPort {
  return (client as { isCluster?: boolean }).isCluster === true;
}

/** The client's `commandTimeout` in ms, when it has one (a Cluster's is in its `redisOptions`). */
export function commandTimeoutOf(client: RedisClientPort): number | undefined {
  const options = isCluster(client) ? client.options.redisOptions : client.options;
  return typeof options?.commandTimeout === 'number' ? options.commandTimeout : undefined;
}
