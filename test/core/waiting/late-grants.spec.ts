import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { LockNotAcquiredError } from '../../../lib/errors/lock-not-acquired.error.js';
import { LockStoreError } from '../../../lib/errors/lock-store.error.js';
import type { LockStore } from '../../../lib/interfaces/lock-store.interface.js';
import { LOCK_EVENT_NAMES, type LockEventMap, type LockEventName } from '../../../lib/core/events/lock-events.js';
import { LockManager } from '../../../lib/core/lock-manager.js';
import type { Lock } from '../../../lib/core/lock.js';
import { MemoryLockStore } from '../../../lib/stores/memory/memory.store.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../../lib/stores/redis/resource-keys.js';
import { startChild, type ChildHandle } from '../../support/child-process.js';
import { startFaultProxy, type FaultProxy } from '../../support/fault-proxy.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';

const rivalProgram = fileURLToPath(new URL('./late-grants.rival.ts', import.meta.url));
const KEY = 'late:doc';
/** Short leases, so that a delay or a stall longer than them is quick to make. */
const TTL = 200;
/** The lease of the tests whose retry must come back in time after a stall made the first grant late. */
const SLOW_MACHINE_TTL = 1_000;

type Seen = { name: LockEventName; event: LockEventMap[LockEventName] };

/** Every event of `manager`, in the order they fired. */
function record(manager: LockManager): Seen[] {
  const seen: Seen[] = [];
  for (const name of LOCK_EVENT_NAMES) manager.on(name, (event) => void seen.push({ name, event }));
  return seen;
}

/**
 * The events of `seen` but the renewals of leases already acquired: a 200 ms lease renews every ~67 ms while its
 * section runs, as many times as the machine's speed makes it, which is not what these tests count. A renewal
 * before any grant stays, and fails them: a late grant is never renewed.
 */
function withoutRenewals(seen: readonly Seen[]): Seen[] {
  let acquired = false;
  return seen.filter(({ name }) => {
    if (name === 'acquired') acquired = true;
    return name !== 'renewed' || !acquired;
  });
}

/** Blocks this process's event loop until `done()` or `limit` ms, as a long synchronous task would. */
function blockUntil(done: () => boolean, limit: number): void {
  const end = performance.now() + limit;
  while (!done() && performance.now() < end) {
    // busy on purpose: no timer, socket or promise of this process runs meanwhile
  }
}

/** Resolves once `check()` is true, looking every few ms (it watches another process). */
async function until(check: () => Promise<boolean>, what: string, limit = 10_000): Promise<void> {
  const end = performance.now() + limit;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`${what} did not happen within ${limit} ms`);
    await sleep(2);
  }
}

/** The same store, whose first `operation` blocks the event loop right after its request is sent, until `done()`. */
function stallingOnce(store: RedisLockStore, operation: 'acquire' | 'handOver', done: () => boolean): LockStore {
  let stalled = false;
  const line = store.capabilities.line!;
  const stall = <T>(reply: Promise<T>): Promise<T> => {
    if (!stalled) {
      stalled = true;
      blockUntil(done, 30_000);
    }
    return reply;
  };
  return {
    acquire: (request) => (operation === 'acquire' ? stall(store.acquire(request)) : store.acquire(request)),
    release: (key, token) => store.release(key, token),
    extend: (key, token, ttl) => store.extend(key, token, ttl),
    extendMany: (renewals) => store.extendMany(renewals),
    inspect: (key) => store.inspect(key),
    watch: (key, since) => store.watch(key, since),
    close: () => store.close(),
    capabilities: {
      line: {
        handOver: (key, token, next) =>
          operation === 'handOver' ? stall(line.handOver(key, token, next)) : line.handOver(key, token, next),
        leaveLine: (key) => line.leaveLine(key),
      },
    },
  };
}

describe('grants that come back after their validity, with a rival process taking the key meanwhile', () => {
  let prefix: string;
  let admin: Redis;
  let dir: string;
  let enteredFile: string;
  let rival: ChildHandle;
  let proxy: FaultProxy | undefined;
  const managers: LockManager[] = [];
  /** What each section of this process saw on entry: whether its lease was valid, and how many were inside. */
  let entries: Array<{ isHeld: boolean; inside: number }>;

  const insideKey = () => `${prefix}inside`;
  const lockKey = () => resourceKeys(prefix, KEY).lock;
  const rivalEntered = () => existsSync(enteredFile);

  beforeEach(async () => {
    prefix = uniquePrefix();
    admin = new Redis(testRedisUrl());
    dir = mkdtempSync(join(tmpdir(), 'nestjs-lock-late-'));
    enteredFile = join(dir, 'entered');
    entries = [];
    rival = startChild(rivalProgram, {
      REDIS_URL: testRedisUrl(),
      KEY_PREFIX: prefix,
      KEY,
      INSIDE_KEY: insideKey(),
      ENTERED_FILE: enteredFile,
      TTL: String(10 * TTL),
    });
    await rival.waitFor('ready', 30_000);
  });

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((manager) => manager.close()));
    await rival.kill();
    await proxy?.close();
    proxy = undefined;
    await admin.quit();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A manager on its own connection (through `url`), ready before the test starts timing it. */
  async function lockStore(url = testRedisUrl()): Promise<RedisLockStore> {
    const store = new RedisLockStore({
      client: new Redis(url, { maxRetriesPerRequest: 1 }),
      keyPrefix: prefix,
      ownsClient: true,
    });
    // scripts cached and the connection up: the first acquire is one round trip
    await store.verify();
    return store;
  }

  function manager(store: LockStore): LockManager {
    const created = new LockManager({ store });
    managers.push(created);
    return created;
  }

  /** The section of this process: counts who is inside, as the rival does. */
  async function section(lock: Lock): Promise<void> {
    const isHeld = lock.isHeld;
    const inside = await admin.incr(insideKey());
    entries.push({ isHeld, inside });
    await admin.decr(insideKey());
  }

  /** Lets the rival leave and checks that its lease held all along: the late grant's release did not touch it. */
  async function rivalLeaves(): Promise<void> {
    rival.send('leave');
    await rival.waitFor('done');
    expect(rival.output()).toContain('entered 1\n');
    expect(rival.output()).toContain('left {"held":true}\n');
  }

  /** A manager whose connections go through a fault proxy. */
  async function proxied(): Promise<{ locks: LockManager; proxy: FaultProxy }> {
    proxy = await startFaultProxy(testRedisUrl());
    return { locks: manager(await lockStore(proxy.url)), proxy };
  }

  /** Starts `using()` through a proxy that holds the grant back until the rival has taken the key. */
  async function delayedGrant(locks: LockManager, proxy: FaultProxy, wait: number): Promise<unknown> {
    proxy.latency(300);
    rival.send('take');
    const outcome = locks.using(KEY, section, { ttl: TTL, wait }).then(
      () => 'resolved',
      (error: unknown) => error,
    );
    // the grant is made on the server; its reply is still on its way back: hold it there
    await until(async () => (await admin.exists(lockKey())) === 1, 'the grant');
    proxy.blackhole();
    // the rival takes the key once the lease ends on the server
    await rival.waitFor('entered');
    proxy.heal();
    return outcome;
  }

  it('never runs a section whose grant a slow network delayed past the TTL: the caller gets a LockStoreError', async () => {
    const { locks, proxy } = await proxied();
    const seen = record(locks);
    const error = await delayedGrant(locks, proxy, 0);

    expect(error).toBeInstanceOf(LockStoreError);
    expect(error).not.toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).message).toMatch(
      /^Lock store failed to acquire: the grant came back \d+ ms after its validity ended \(\d+ ms after the request was sent, for a 200 ms lease\), so it was released unused: the store, or this process's event loop, is too slow for this ttl\./,
    );
    expect(entries).toEqual([]);
    expect(seen.map(({ name }) => name)).toEqual(['late-grant', 'store-error']);
    expect(seen[0].event).toMatchObject({ key: KEY, ttl: TTL, retrying: false });
    expect((seen[0].event as LockEventMap['late-grant']).lateBy).toBeGreaterThan(0);
    await rivalLeaves();
  });

  it('asks again within its wait after a grant the network delayed, and runs the section only on a valid grant', async () => {
    const { locks, proxy } = await proxied();
    const seen = record(locks);
    const outcome = delayedGrant(locks, proxy, 10_000);
    // the second try finds the rival inside; once it leaves, the key is ours
    await until(async () => seen.some(({ name }) => name === 'contended'), 'the second try');
    await rivalLeaves();

    expect(await outcome).toBe('resolved');
    expect(entries).toEqual([{ isHeld: true, inside: 1 }]);
    expect(withoutRenewals(seen).map(({ name }) => name)).toEqual([
      'late-grant',
      'contended',
      'waited',
      'acquired',
      'released',
    ]);
    expect(seen[0].event).toMatchObject({ retrying: true });
  });

  it('never runs a section whose grant was read after an event-loop stall past the TTL', async () => {
    const locks = manager(stallingOnce(await lockStore(), 'acquire', rivalEntered));
    const seen = record(locks);
    rival.send('take');
    // the request is sent, then the loop blocks while the grant's reply waits unread and the lease runs out
    const error = await locks.using(KEY, section, { ttl: TTL }).catch((caught: unknown) => caught);

    expect(rivalEntered()).toBe(true);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/the grant came back \d+ ms after its validity ended/);
    expect(entries).toEqual([]);
    // reported as what it is: no lease was held, so none was lost to a stall
    expect(seen.map(({ name }) => name)).toEqual(['late-grant', 'store-error']);
    await rivalLeaves();
  });

  it('gets a later valid grant within its wait after an event-loop stall made the first one late', async () => {
    const locks = manager(stallingOnce(await lockStore(), 'acquire', rivalEntered));
    const seen = record(locks);
    rival.send('take');
    // a longer lease than the other tests': on a busy machine a 200 ms one may come back late a second time
    const outcome = locks.using(KEY, section, { ttl: SLOW_MACHINE_TTL, wait: 30_000 });
    await until(async () => seen.some(({ name }) => name === 'contended'), 'the second try', 30_000);
    await rivalLeaves();
    await outcome;

    expect(entries).toEqual([{ isHeld: true, inside: 1 }]);
    expect(withoutRenewals(seen).map(({ name }) => name)).toEqual([
      'late-grant',
      'contended',
      'waited',
      'acquired',
      'released',
    ]);
  }, 60_000);

  it('never starts a local waiter on a lease handed over to it that came back after its validity', async () => {
    const inner = await lockStore();
    const locks = manager(stallingOnce(inner, 'handOver', rivalEntered));
    const seen = record(locks);
    const holder = await locks.acquire(KEY, { ttl: 10_000 });
    const waiting = locks.using(KEY, section, { ttl: SLOW_MACHINE_TTL, wait: 30_000, label: 'waiter' });
    // the waiter stands by to be handed the lease by the local release
    const queues = (locks as unknown as { queues: Map<string, { offer?: object }> }).queues;
    await until(async () => queues.get(KEY)?.offer !== undefined, 'the waiter standing by');
    // the rival waits for the handed-over lease to run out on the server, while this process is blocked
    rival.send('take waiter');
    await holder.release();
    await rival.waitFor('entered');
    await rivalLeaves();
    await waiting;

    expect(entries).toEqual([{ isHeld: true, inside: 1 }]);
    const events = withoutRenewals(seen);
    expect(events.map(({ name }) => name)).toEqual([
      'acquired',
      'contended',
      'released',
      'late-grant',
      'waited',
      'acquired',
      'released',
    ]);
    expect(events[3].event).toMatchObject({ key: KEY, retrying: true, label: 'waiter' });
  }, 60_000);
});

describe('leases that end before their section starts', () => {
  const managers: LockManager[] = [];
  const manager = (store = new MemoryLockStore()) => {
    const created = new LockManager({ store });
    managers.push(created);
    return created;
  };

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.close()));
  });

  it('takes a multi-key set again when its first lease ended while the last was taken, and runs on valid leases', async () => {
    const store = new MemoryLockStore();
    const locks = manager(store);
    const other = manager(store);
    const busy = await other.acquire('acct:b', { ttl: 10_000 });
    locks.on('lost', () => void busy.release());
    const seen = record(locks);
    let validAtStart: boolean[] = [];
    // no renewals: the lease on acct:a ends while acct:b is still held by another
    await locks.using(['acct:a', 'acct:b'], (taken) => void (validAtStart = taken.map((lock) => lock.isHeld)), {
      ttl: TTL,
      wait: 10_000,
      autoRenew: false,
    });

    expect(validAtStart).toEqual([true, true]);
    expect(seen.map(({ name, event }) => `${name} ${event.key}`)).toEqual([
      'acquired acct:a',
      'contended acct:b',
      'lost acct:a',
      'waited acct:b',
      'acquired acct:b',
      'released acct:b',
      'acquired acct:a',
      'acquired acct:b',
      'released acct:a',
      'released acct:b',
    ]);
  });

  it('fails with a LockStoreError, without running the section, when a lease ended before it and no wait is left', async () => {
    const locks = manager();
    // a listener that blocks while the second key is granted: the first lease ends before the section
    locks.on('acquired', ({ key }) => {
      if (key === 'pair:b') blockUntil(() => false, 2 * TTL);
    });
    const seen = record(locks);
    let ran = false;
    const error = await locks
      .using(['pair:a', 'pair:b'], () => void (ran = true), { ttl: TTL, autoRenew: false })
      .catch((caught: unknown) => caught);

    expect(ran).toBe(false);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(
      /^Lock store failed to acquire: its lease ended before the section could start \(its validity ran out\), so the section was not run/,
    );
    // each lease still ends with exactly one released or lost
    const ends = seen.filter(({ name }) => name === 'released' || name === 'lost').map(({ event }) => event.key);
    expect(ends.sort()).toEqual(['pair:a', 'pair:b']);
    expect(locks.heldCount).toBe(0);
  });

  it('does not let a nested call reuse a lease of its flow that ended while it took its other keys', async () => {
    const store = new MemoryLockStore();
    const locks = manager(store);
    const other = manager(store);
    const validAtStart: boolean[][] = [];
    await locks.using(
      'acct:a',
      async () => {
        const busy = await other.acquire('acct:b', { ttl: 10_000 });
        // acct:b frees up once the outer lease on acct:a has run out
        locks.on('lost', () => void busy.release());
        await locks.using(['acct:a', 'acct:b'], (taken) => void validAtStart.push(taken.map((lock) => lock.isHeld)), {
          ttl: TTL,
          wait: 10_000,
          autoRenew: false,
        });
      },
      { ttl: TTL, autoRenew: false },
    );

    expect(validAtStart).toEqual([[true, true]]);
  });
});

describe('a late grant whose give-back fails', () => {
  it('asks again with a new token, so the failed release, applied later, ends nothing it was granted', async () => {
    const keyPrefix = uniquePrefix();
    const inner = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true });
    const admin = new Redis(testRedisUrl());
    let asks = 0;
    let releases = 0;
    const manager = new LockManager({
      store: Object.assign(Object.create(inner) as RedisLockStore, {
        // the first ask reaches the server 1.1 s after it was sent: its 1 s lease is late on arrival
        acquire: async (...args: Parameters<LockStore['acquire']>) => {
          if (args[0].key === KEY && ++asks === 1) await sleep(1100);
          return inner.acquire(...args);
        },
        // the give-back's release fails at once (a dropped connection), and is applied 300 ms later all the same
        release: async (...args: Parameters<LockStore['release']>) => {
          if (args[0] === KEY && ++releases === 1) {
            setTimeout(() => void inner.release(...args).catch(() => undefined), 300);
            throw new Error('Connection is closed.');
          }
          return inner.release(...args);
        },
      }),
    });
    try {
      // the store's check and scripts done first
      await (await manager.acquire('warm-up', { ttl: SLOW_MACHINE_TTL })).release();
      const lock = await manager.acquire(KEY, { ttl: SLOW_MACHINE_TTL, wait: 10_000, autoRenew: true });
      // past the failed release's late arrival: the key is still this lease's (without a new token: deleted)
      await sleep(600);
      expect(asks).toBeGreaterThanOrEqual(2);
      expect(lock.isHeld).toBe(true);
      expect(await admin.pttl(resourceKeys(keyPrefix, KEY).lock)).toBeGreaterThan(0);
      expect(await lock.release()).toBe(true);
    } finally {
      await manager.close();
      await admin.quit();
    }
  });
});

describe('a late permit whose give-back fails', () => {
  // the failed release is applied 300 ms later all the same, or never (its permit is then released again)
  it.each([
    ['is applied later', 300],
    ['is never applied', undefined],
  ])('asks no more with its token, and its permit goes, when the failed release %s', async (_case, appliedAfter) => {
    const ttl = 2000;
    const keyPrefix = uniquePrefix();
    const inner = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true });
    const permits = inner.capabilities.permits!;
    let asks = 0;
    let releases = 0;
    const store = Object.assign(Object.create(inner) as RedisLockStore, {
      capabilities: {
        ...inner.capabilities,
        permits: Object.assign(Object.create(permits) as typeof permits, {
          // the first ask reaches the server 2.1 s after it was sent: its 2 s permit is late on arrival
          acquire: async (...args: Parameters<typeof permits.acquire>) => {
            if (args[0].key === KEY && ++asks === 1) await sleep(ttl + 100);
            return permits.acquire(...args);
          },
          // the give-back's release fails at once (a dropped connection)
          release: async (...args: Parameters<typeof permits.release>) => {
            if (args[0] === KEY && ++releases === 1) {
              if (appliedAfter !== undefined) {
                setTimeout(() => void permits.release(...args).catch(() => undefined), appliedAfter);
              }
              throw new Error('Connection is closed.');
            }
            return permits.release(...args);
          },
        }),
      },
    });
    const manager = new LockManager({ store });
    try {
      // the store's check and scripts done first
      await (await manager.acquire('warm-up', { ttl, limit: 2 })).release();
      const outcome = await manager
        .acquire(KEY, { ttl, wait: 10_000, autoRenew: true, limit: 2 })
        .catch((error: unknown) => error as Error);
      // a permit's place and watch are its token's: it ends as a late grant rather than ask with that token
      // again (a permit granted to it would be ended by the failed release, applied later)
      expect(outcome).toBeInstanceOf(LockStoreError);
      expect((outcome as Error).message).toMatch(/released unused/);
      expect(asks).toBe(1);
      // the late permit lives on the server until 2 s after its arrival unless released again
      const deadline = performance.now() + 1000;
      while ((await permits.inspect(KEY)).holders > 0 && performance.now() < deadline) await sleep(20);
      expect((await permits.inspect(KEY)).holders).toBe(0);
    } finally {
      await manager.close();
    }
  });
});
