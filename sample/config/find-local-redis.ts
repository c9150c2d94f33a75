import { Redis } from 'ioredis';

/** Whether a Redis answers PING at `url` within `timeout` ms; never retries, never throws. */
export async function findLocalRedis(url: string, timeout = 300): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeout,
    commandTimeout: timeout,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}
