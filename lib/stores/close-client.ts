import type { Cluster, Redis } from 'ioredis';

/**
 * Quits politely when connected; a client still (re)connecting is cut, or quit() would wait for it.
 * An ended client is left alone: ioredis 6 arms a 2 s timer on disconnect() of a closed socket.
 */
export async function closeClient(client: Redis | Cluster): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  await client.quit().catch(() => client.disconnect());
}
