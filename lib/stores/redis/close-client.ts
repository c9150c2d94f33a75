import type { RedisClientPort } from './client/redis-client-port.js';

/**
 * Quits politely when connected; a client still (re)connecting is cut, or quit() would wait for it.
 * An ended client is left alone: ioredis 6 arms a 2 s timer on disconnect() of a closed socket. A Sentinel
 * client with `failoverDetector` is cut too: quit() leaves the detector's own Sentinel connections open
 * (ioredis issue 1362), and they would keep the process alive.
 */
export async function closeClient(client: RedisClientPort): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready' || hasFailoverDetector(client)) {
    client.disconnect();
    return;
  }
  await client.quit().catch(() => client.disconnect());
}

function hasFailoverDetector(client: RedisClientPort): boolean {
  const options = client.options as { sentinels?: unknown; failoverDetector?: boolean };
  return options.sentinels !== undefined && options.failoverDetector === true;
}
