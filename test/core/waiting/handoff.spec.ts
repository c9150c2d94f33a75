import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { LockStoreError } from '../../../lib/errors/lock-store.error.js';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../../lib/stores/redis/resource-keys.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';
import { storedToken } from '../../support/stored-token.js';
import { channelListeners } from '../../support/channel-listeners.js';

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
    // a waiter left to its 4 s backoff fails this; a starved machine took 1.35 s for the 400 ms lease
    expect(waited).toBeLessThan(2500);
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
    while ((await channelListeners(admin, channel)) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const clients = await admin.client('LIST');
    const subscriber = String(clients)
      .split('\n')
      .find((line) => /cmd=(subscribe|ssubscribe)/.test(line) && / sub=1 /.test(line));
    expect(subscriber).toBeDefined();
    await admin.client('KILL', 'ID', /id=(\d+)/.exec(subscriber!)![1]);
    while ((await channelListeners(admin, channel)) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
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
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 500));
      const sent = (await commandCount(admin, 'evalsha')) - before;
      // only the head's safety-net retries (one per 50-100 ms) reach Redis, not six waiters' worth (three
      // times as many); the bound follows the window's real length, which a busy machine stretches past 500 ms
      const window = performance.now() - started;
      expect(sent).toBeLessThanOrEqual(Math.ceil(window / 50) + 1);
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
    while ((await channelListeners(admin, channel)) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await first.release();
    // the releaser tries again at once; the hand-off window reserves the key for the waiter elsewhere
    expect(await greedy.tryAcquire('contended')).toBeNull();
    const handedOver = await waiting;
    expect(handedOver.isHeld).toBe(true);
    await handedOver.release();
  });

  it('hands a released lease straight to the next local waiter in the same call, the waiter sending nothing', async () => {
    const local = manager();
    const events: string[] = [];
    local.on('released', ({ key }) => events.push(`released ${key}`));
    local.on('acquired', ({ key, attempts }) => events.push(`acquired ${key} after ${attempts} attempts`));
    const lock = await local.acquire('direct', { ttl: 30_000, fencing: true });
    const refused = new Promise((resolve) => local.on('contended', resolve));
    // the waiter's own retries would come every 5 s: anything sooner is the hand-over
    const waiting = local.acquire('direct', { wait: 10_000, fencing: true, retry: { minDelay: 5000, maxDelay: 5000 } });
    // counted from once the waiter's refused ask is answered: a busy machine may not have sent it within a pause
    await refused;
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = await commandCount(admin, 'evalsha');
    await lock.release();
    const next = await waiting;
    expect((await commandCount(admin, 'evalsha')) - before).toBe(1);
    expect(next.isHeld).toBe(true);
    expect(next.fence).toBeGreaterThan(lock.fence!);
    expect(storedToken(await admin.get(resourceKeys(keyPrefix, 'direct').lock))).toBe(next.token);
    // the waiter was refused once before it stood by, then handed the lease
    expect(events).toEqual(['acquired direct after 1 attempts', 'released direct', 'acquired direct after 2 attempts']);
    await next.release();
    expect((await local.inspect('direct')).held).toBe(false);
  });

  it('stops handing over locally once another process waits, so a busy process cannot keep a key', async () => {
    const busy = manager();
    const patient = manager();
    let stop = false;
    // three loops keep a local waiter standing by at every release of `busy`
    const loops = Array.from({ length: 3 }, async () => {
      while (!stop)
        await busy.using('shared', () => new Promise((resolve) => setTimeout(resolve, 2)), { wait: 10_000 });
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    const lock = await patient.acquire('shared', { wait: 3000 });
    const waited = performance.now() - started;
    stop = true;
    await lock.release();
    await Promise.all(loops);
    expect(waited).toBeLessThan(500);
  });

  it('still gives the waiter the lease when the hand-over reply is lost, by its retry with the same token', async () => {
    const inner = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true });
    const line = inner.capabilities.line!;
    const lossy = Object.assign(Object.create(inner) as RedisLockStore, {
      capabilities: {
        ...inner.capabilities,
        line: Object.assign(Object.create(line) as typeof line, {
          handOver: async (...args: Parameters<typeof line.handOver>) => {
            await line.handOver(...args);
            throw new LockStoreError('release', args[0], new Error('Connection is closed.'));
          },
        }),
      },
    });
    const local = new LockManager({ store: lossy });
    managers.push(local);
    const lock = await local.acquire('lossy', { ttl: 30_000 });
    const waiting = local.acquire('lossy', { wait: 3000, retry: { minDelay: 20, maxDelay: 20 } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(lock.release()).rejects.toBeInstanceOf(LockStoreError);
    const next = await waiting;
    expect(next.isHeld).toBe(true);
    expect(storedToken(await admin.get(resourceKeys(keyPrefix, 'lossy').lock))).toBe(next.token);
    await next.release();
  });

  it('serves processes in the order they asked: a release reserves the key for the first in line and wakes only it', async () => {
    const [a, b, c] = [manager(), manager(), manager()];
    const order: string[] = [];
    const first = await a.acquire('line', { ttl: 30_000 });
    const taking = (name: string, from: LockManager) =>
      from.using('line', () => void order.push(name), { wait: 10_000, retry: { minDelay: 3000, maxDelay: 3000 } });
    // each waits once it stands in the line and listens on its own channel, where its grant will be told
    const standing = async (count: number) =>
      (await admin.llen(resourceKeys(keyPrefix, 'line').line)) === count &&
      (await channelListeners(admin, resourceKeys(keyPrefix, 'line').channel)) === count;
    const bDone = taking('b', b);
    await waitUntil(() => standing(1));
    const cDone = taking('c', c);
    await waitUntil(() => standing(2));
    const started = performance.now();
    await first.release();
    // the releaser asks again at once, and so would anyone else: the key waits for b, then for c
    const again = a.using('line', () => void order.push('a'), { wait: 10_000 });
    await Promise.all([bDone, cDone, again]);
    expect(order).toEqual(['b', 'c', 'a']);
    // woken by notices, not by their 3 s timers
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await admin.exists(resourceKeys(keyPrefix, 'line').line)).toBe(0);
  });

  it('gives up its place when it stops waiting; a place left by a crashed process costs one hand-off window', async () => {
    const [holder, gone, next] = [manager(), manager(), manager()];
    const lock = await holder.acquire('left', { ttl: 30_000 });
    // `gone` joins the line and then gives up, which gives its place up too (in the background)
    await expect(gone.acquire('left', { wait: 100 })).rejects.toThrow(/held by another owner/);
    await waitUntil(async () => (await admin.llen(resourceKeys(keyPrefix, 'left').line)) === 0);
    // a place left behind all the same (a process that crashed while waiting) is passed over
    await admin.rpush(resourceKeys(keyPrefix, 'left').line, 'ffffffffffffffff');
    const waiting = next.acquire('left', { wait: 5000, retry: { minDelay: 3000, maxDelay: 3000 } });
    await waitUntil(async () => (await admin.llen(resourceKeys(keyPrefix, 'left').line)) === 2);
    // `next` listens for notices before the release: it must look again after the window, not sleep its 3 s
    const channel = resourceKeys(keyPrefix, 'left').channel;
    await waitUntil(async () => (await channelListeners(admin, channel)) > 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();
    await lock.release();
    const taken = await waiting;
    expect(performance.now() - started).toBeLessThan(1000);
    await taken.release();
  });

  it('keeps greedy processes fair: each of 4 gets its share of a key they all re-take at once', async () => {
    const workers = Array.from({ length: 4 }, () => manager());
    const counts = workers.map(() => 0);
    // who entered, in order: how long a worker waited is counted in the sections of others it let go first
    const entries: number[] = [];
    const until = performance.now() + 1500;
    await Promise.all(
      workers.map(async (worker, index) => {
        while (performance.now() < until) {
          await worker.using(
            'greedy',
            async () => {
              entries.push(index);
              counts[index]++;
              await new Promise((resolve) => setTimeout(resolve, 2));
            },
            { wait: 10_000 },
          );
        }
      }),
    );
    const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
    // without the line, the process whose release notice arrives first wins most rounds (Jain ~0.5 in the bench)
    expect(Math.min(...counts)).toBeGreaterThan(mean * 0.7);
    // in line, a worker that asks again waits for each of the others once; three times that leaves room for turns
    // passed over when a loaded machine makes a worker late for its window, and still tells a line from the
    // free-for-all, where a slow process loses hundreds of rounds in a row
    const othersBetween = workers.map((_, index) => {
      const mine = entries.flatMap((entered, at) => (entered === index ? [at] : []));
      return Math.max(0, ...mine.slice(1).map((at, i) => at - mine[i] - 1));
    });
    expect(Math.max(...othersBetween)).toBeLessThanOrEqual(3 * (workers.length - 1));
  });

  /** Two waits of `waiter` for a key `holder` takes first; the attempts each needed. */
  async function twoWaits(holder: LockManager, waiter: LockManager): Promise<number[]> {
    const attempts: number[] = [];
    waiter.on('acquired', (event) => attempts.push(event.attempts));
    const key = resourceKeys(keyPrefix, 'covered').lock;
    for (let round = 0; round < 2; round++) {
      const lock = await holder.acquire('covered', { ttl: 30_000 });
      const waiting = waiter.acquire('covered', { wait: 5000, retry: { minDelay: 3000, maxDelay: 3000 } });
      // the waiter was refused: it marked the lease
      await waitUntil(async () => (await admin.get(key))?.startsWith('!') === true);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await lock.release();
      await (await waiting).release();
    }
    return attempts;
  }

  it('asks once, not twice, when its channel is still subscribed from a recent wait (no notice can be missed)', async () => {
    // without the line (no hand-off window), a waiter is woken by '*' notices and asks after each
    const attempts = await twoWaits(manager({ handoffWindow: 0 }), manager({ handoffWindow: 0 }));
    // the second wait finds the channel still subscribed from the first, so its refusal is covered and it
    // only waits for the notice: refused, then granted (without cover it asks again at once, as the first did)
    expect(attempts).toEqual([3, 2]);
  });

  it('in the line, leaves its request beside its place with its first ask, and is granted by the release', async () => {
    const attempts = await twoWaits(manager(), manager());
    // the first wait: refused (it joins the line, its request beside its place) before its channel was
    // subscribed, so it asks once more in case a release went unheard; the release then grants it. The second
    // wait finds the channel still subscribed: refused, then granted by the release, with no other request
    expect(attempts).toEqual([2, 1]);
  });

  it('lets only the first of two waiters of one process that ask at once leave its request in the line', async () => {
    const holder = manager();
    const waiters = manager();
    const key = resourceKeys(keyPrefix, 'pair').lock;
    const slow = { wait: 10_000, retry: { minDelay: 3000, maxDelay: 3000 } };
    // a first wait leaves the channel subscribed (it lingers), so the next waiter's first request can suffice
    const warm = await holder.acquire('pair', { ttl: 30_000 });
    const warming = waiters.acquire('pair', slow);
    await waitUntil(async () => (await admin.get(key))?.startsWith('!') === true);
    await warm.release();
    await (await warming).release();

    const lock = await holder.acquire('pair', { ttl: 30_000 });
    let refused = 0;
    waiters.on('contended', () => refused++);
    const first = waiters.acquire('pair', slow);
    const second = waiters.acquire('pair', slow);
    // both asked the store and were refused: their requests (if any) stand in the line
    await waitUntil(async () => refused === 2);
    // the release grants the request of the local queue's head; had the second waiter's request replaced the
    // first's in the line, the grant would go to a waiter that is not the head and be given back, and the
    // head would wait for its 1.5 to 3 s backoff
    let since = performance.now();
    await lock.release();
    const firstLock = await first;
    expect(performance.now() - since).toBeLessThan(1000);
    since = performance.now();
    await firstLock.release();
    await (await second).release();
    expect(performance.now() - since).toBeLessThan(1000);
  });
});

async function waitUntil(condition: () => Promise<boolean>, timeout = 5000): Promise<void> {
  const deadline = performance.now() + timeout;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeout} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function commandCount(admin: Redis, command: string): Promise<number> {
  const stats = await admin.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}
