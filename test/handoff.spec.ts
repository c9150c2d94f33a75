import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { LockManager } from '../lib/lock-manager.js';
import { RedisLockStore } from '../lib/stores/redis.store.js';
import { resourceKeys } from '../lib/utils/resource-keys.js';
import { testRedisUrl, uniquePrefix } from './support/stores.js';

describe('waiting and hand-off on Redis', () => {
  let keyPrefix: string;
  let admin: Redis;
  const managers: LockManager[] = [];
  const manager = (options: Partial<ConstructorParameters<typeof RedisLockStore>[0]> = {}) => {
    const store = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true, ...options });
    const created = new LockManager({ store });
    managers.push(created);
    return created;
  };

  beforeEach(() => {
    keyPrefix = uniquePrefix();
    admin = new Redis(testRedisUrl());
  });

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.close()));
    await admin.quit();
  });

  it("still acquires within the holder's remaining lease when the release notice is never sent", async () => {
    const holder = manager();
    const waiter = manager({ releaseNotices: false });
    await holder.acquire('quiet', { ttl: 400 });
    const started = performance.now();
    // the holder "crashes": no release, no notice; the waiter's sleep is bounded by the PTTL it was told
    const lock = await waiter.acquire('quiet', { wait: 5000, retry: { minDelay: 4000, maxDelay: 4000 } });
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThan(300);
    expect(waited).toBeLessThan(1000);
    await lock.release();
  });

  it('falls back to backoff, not a hang, when notices are off and the holder releases early', async () => {
    const holder = manager({ releaseNotices: false });
    const waiter = manager({ releaseNotices: false });
    const lock = await holder.acquire('early', { ttl: 30_000 });
    const waiting = waiter.acquire('early', { wait: 5000, retry: { minDelay: 50, maxDelay: 100 } });
    setTimeout(() => void lock.release(), 100);
    const next = await waiting;
    expect(next.isHeld).toBe(true);
    await next.release();
  });

  it('leaves no waiter behind when the shared subscriber connection is killed and reconnects', async () => {
    const holder = manager();
    const waiter = manager();
    const lock = await holder.acquire('resubscribe', { ttl: 30_000 });
    const waiting = Promise.all(
      Array.from({ length: 5 }, () =>
        waiter.using('resubscribe', () => 'done', { wait: 10_000, retry: { minDelay: 5000, maxDelay: 5000 } }),
      ),
    );
    // wait until the waiter's subscriber is listening, then cut it from the server side
    const channel = resourceKeys(keyPrefix, 'resubscribe').channel;
    while (Number((await admin.pubsub('NUMSUB', channel))[1]) === 0)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const clients = await admin.client('LIST');
    const subscriber = String(clients)
      .split('\n')
      .find((line) => /cmd=(subscribe|ssubscribe)/.test(line) && / sub=1 /.test(line));
    expect(subscriber).toBeDefined();
    await admin.client('KILL', 'ID', /id=(\d+)/.exec(subscriber!)![1]);
    while (Number((await admin.pubsub('NUMSUB', channel))[1]) === 0)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const started = performance.now();
    await lock.release();
    expect(await waiting).toEqual(Array(5).fill('done'));
    // woken by the notice on the re-established subscription, not by the 5 s backoff
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('serves local waiters for one key in arrival order, with one of them talking to Redis at a time', async () => {
    const holder = manager();
    const local = manager();
    const lock = await holder.acquire('fifo', { ttl: 30_000 });
    const order: number[] = [];
    const retry = { minDelay: 100, maxDelay: 100 };
    const waiters = Array.from({ length: 6 }, (_, i) =>
      local.using('fifo', () => void order.push(i), { wait: 10_000, retry }),
    );
    const settled = Promise.allSettled(waiters);
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const before = await commandCount(admin, 'evalsha');
      await new Promise((resolve) => setTimeout(resolve, 500));
      // only the head's safety-net retries (one per 50-100 ms) reach Redis, not six waiters' worth
      expect((await commandCount(admin, 'evalsha')) - before).toBeLessThanOrEqual(11);
      await lock.release();
      await Promise.all(waiters);
      expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    } finally {
      await settled;
    }
  });

  it('does not let a releaser re-take a key that another process is waiting for', async () => {
    const greedy = manager();
    const patient = manager();
    const first = await greedy.acquire('contended', { ttl: 30_000 });
    const waiting = patient.acquire('contended', { wait: 5000 });
    const channel = resourceKeys(keyPrefix, 'contended').channel;
    while (Number((await admin.pubsub('NUMSUB', channel))[1]) === 0)
      await new Promise((resolve) => setTimeout(resolve, 5));
    await first.release();
    // the releaser tries again at once; the hand-off window reserves the key for the waiter elsewhere
    expect(await greedy.tryAcquire('contended')).toBeNull();
    const handedOver = await waiting;
    expect(handedOver.isHeld).toBe(true);
    await handedOver.release();
  });
});

async function commandCount(admin: Redis, command: string): Promise<number> {
  const stats = await admin.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}
