// Takes and releases 100,000 distinct keys through LockManager on Redis, then reports what per-key state
// is left in the process and in Redis, and how the heap grew. Run with --expose-gc by security.spec.ts.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockManager } from '../../lib/core/lock-manager.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import { SUBSCRIPTION_LINGER } from '../../lib/stores/redis/release-subscriber.js';

const { REDIS_URL, KEY_PREFIX, KEYS } = process.env as Record<string, string>;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const client = new Redis(REDIS_URL);
const store = new RedisLockStore({ client, keyPrefix: KEY_PREFIX });
const other = new RedisLockStore({ client: new Redis(REDIS_URL), keyPrefix: KEY_PREFIX, ownsClient: true });
const manager = new LockManager({ store, closeStore: false });
const holder = new LockManager({ store: other });

/** The per-key state of a manager and its store: every map that a key could be left behind in. */
function state(of: LockManager, on: RedisLockStore): Record<string, number> {
  const internals = of as unknown as {
    queues: Map<unknown, unknown>;
    leases: { renewer: { size: number } };
  };
  const subscriber = (on as unknown as { subscriber?: { channels: Map<unknown, unknown> } }).subscriber;
  return {
    held: of.heldCount,
    queues: internals.queues.size,
    renewed: internals.leases.renewer.size,
    channels: subscriber?.channels.size ?? 0,
  };
}

/** One key: mostly a free key taken and released; every 500th, a contended one (queue, notice, hand-off). */
async function exercise(name: string, index: number): Promise<void> {
  if (index % 500 === 0) {
    const held = await holder.acquire(name, { ttl: 10_000 });
    const waiting = manager.using(name, () => undefined, { wait: 5000 });
    setTimeout(() => void held.release(), 5);
    await waiting;
    return;
  }
  if (index % 7 === 0) {
    // a lock handle, renewed, released by hand
    const lock = await manager.acquire(name, { autoRenew: true });
    await lock.release();
    return;
  }
  await manager.using(name, () => undefined);
}

async function run(prefix: string, count: number): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      await exercise(`${prefix}:${index}:${'x'.repeat(index % 40)}`, index);
    }
  };
  await Promise.all(Array.from({ length: 100 }, lane));
}

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc!();
  return process.memoryUsage().heapUsed;
}

async function redisKeys(): Promise<number> {
  let cursor = '0';
  let found = 0;
  do {
    const [nextCursor, keys] = await client.scan(cursor, 'MATCH', `${KEY_PREFIX}*`, 'COUNT', 1000);
    cursor = nextCursor;
    found += keys.length;
  } while (cursor !== '0');
  return found;
}

const started = performance.now();
// the channels of contended keys stay subscribed for a while after their last waiter: state that ends by itself
const lingerEnds = () => sleep(SUBSCRIPTION_LINGER + 500);
await run('warm-up', 10_000);
await lingerEnds();
const heapBefore = heapAfterGc();
await run('distinct', Number(KEYS));
await lingerEnds();
const heapAfter = heapAfterGc();
console.log(
  `result ${JSON.stringify({
    keys: Number(KEYS),
    seconds: Math.round((performance.now() - started) / 100) / 10,
    heapBefore,
    heapAfter,
    manager: state(manager, store),
    holder: state(holder, other),
    redisKeys: await redisKeys(),
  })}`,
);
await manager.close();
await holder.close();
await store.close();
client.disconnect();
process.exit(0);
