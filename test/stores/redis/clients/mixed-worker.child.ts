// A mutex worker in its own process for bring-your-own-client.spec.ts and glide-client.spec.ts, on the client library CLIENT
// (ioredis, node-redis or glide): waits for "go", runs SECTIONS sections on KEY one lease at a time, counting in
// Redis how many are inside, and prints `done <most inside at once>`. It exits when its stdin closes.
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { GlideClient } from '@valkey/valkey-glide';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { RedisLockStore } from '../../../../lib/stores/redis/redis.store.js';
import { newToken } from '../../../../lib/utils/token.js';
import { waitForMutex } from '../../../support/mutex-waiter.js';

const env = process.env as Record<string, string>;
/** The worker's client, of the library CLIENT names; the store owns and closes it. */
async function clientOf(library: string | undefined) {
  if (library === 'node-redis') return createClient({ url: env.REDIS_URL }).on('error', () => undefined);
  if (library !== 'glide') return new Redis(env.REDIS_URL);
  const { hostname, port } = new URL(env.REDIS_URL);
  return GlideClient.createClient({ addresses: [{ host: hostname, port: Number(port) }], requestTimeout: 2000 });
}

const client = await clientOf(env.CLIENT);
const store = new RedisLockStore({ client, keyPrefix: env.KEY_PREFIX, ownsClient: true });
const counter = new Redis(env.REDIS_URL);
const inside = `${env.KEY_PREFIX}inside`;

createInterface({ input: process.stdin }).on('close', () => process.exit(0));
console.log('ready');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
let most = 0;
for (let section = 0; section < Number(env.SECTIONS); section++) {
  const token = newToken();
  await waitForMutex(store, { key: env.KEY, token, ttl: 5000, fencing: false }, 30_000);
  most = Math.max(most, await counter.incr(inside));
  await sleep(2);
  await counter.decr(inside);
  await store.release(env.KEY, token);
}
await store.close();
await counter.quit();
console.log(`done ${most}`);
