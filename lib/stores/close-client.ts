import type { Cluster, Redis } from 'ioredis';

/** Quits politely when connected; a client still (re)connecting is cut, or quit() would wait for it. */
export async function closeClient(client: Redis | Cluster): Promise<void> {
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  await client.quit().catch(() => client.disconnect());
}
