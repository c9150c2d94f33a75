import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';

/**
 * How many subscriptions a release channel has on one server, its waiters' own channels included: a process
 * that stands in a key's line listens on `<channel>:<owner>` (see RedisLockStore), others on `<channel>`.
 * `sharded` reads the shard channels of a Cluster node (SSUBSCRIBE).
 */
export async function channelListeners(client: Redis, channel: string, sharded = false): Promise<number> {
  const [list, count] = sharded ? ['SHARDCHANNELS', 'SHARDNUMSUB'] : ['CHANNELS', 'NUMSUB'];
  const names = (await client.call('PUBSUB', list, `${channel}*`)) as string[];
  if (names.length === 0) return 0;
  const counts = (await client.call('PUBSUB', count, ...names)) as Array<string | number>;
  let total = 0;
  for (let i = 1; i < counts.length; i += 2) total += Number(counts[i]);
  return total;
}

/** Resolves once every one of `servers` has a subscriber on a channel of `keyPrefix`; closes the connections. */
export async function untilListening(servers: Redis[], keyPrefix: string): Promise<void> {
  try {
    for (let tries = 0; ; tries++) {
      const channels = await Promise.all(servers.map((server) => server.pubsub('CHANNELS', `${keyPrefix}*`)));
      if (channels.every((names) => (names as string[]).length > 0)) return;
      if (tries > 400) throw new Error('no subscriber on every node');
      await sleep(5);
    }
  } finally {
    await Promise.all(servers.map((server) => server.quit()));
  }
}
