import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';
import calculateSlot from 'cluster-key-slot';
import { Redis, type RedisOptions } from 'ioredis';
import { LockConfigurationError } from '../../../lib/errors/lock-configuration.error.js';
import { LockLostError } from '../../../lib/errors/lock-lost.error.js';
import { LockNotAcquiredError } from '../../../lib/errors/lock-not-acquired.error.js';
import { LockStoreError } from '../../../lib/errors/lock-store.error.js';
import type { AcquireRequest } from '../../../lib/interfaces/lease.interface.js';
import type { LockStore } from '../../../lib/interfaces/lock-store.interface.js';
import { clockDrift, type Lock } from '../../../lib/core/lock.js';
import { LockManager, type LockManagerOptions } from '../../../lib/core/lock-manager.js';
import { RedisLockStore, type RedisLockStoreOptions } from '../../../lib/stores/redis/redis.store.js';
import {
  ACQUIRE,
  ALL_SCRIPTS,
  EXTEND_MANY,
  RELEASE,
  RELEASE_UNMARKED,
} from '../../../lib/stores/redis/scripts/index.js';
import { resourceKeys } from '../../../lib/stores/redis/resource-keys.js';
import { encodeHolder } from '../../../lib/core/lock-holder.js';
import { newToken } from '../../../lib/utils/token.js';
import { ADVERSARIAL_KEYS } from '../../contract/lock-store.contract.js';
import { lockUserRules } from '../../support/lock-user-acl.js';
import { startRedisServer, type RedisServerHandle } from '../../support/redis-server.js';
import { channelListeners } from '../../support/channel-listeners.js';
import { commandsDuring } from '../../support/command-counts.js';
import { abortReason, within } from '../../support/within.js';

/** Every client in this file gives up on a command after this long. */
const COMMAND_TIMEOUT = 500;
/** What an operation may take beyond the command timeout: event loop, reconnect backoff, a busy CI machine. */
const MARGIN = 400;
const PREFIX = 'lock:';

let server: RedisServerHandle;
let admin: Redis;
const cleanups: Array<() => unknown> = [];

/** Registers what a test started, to be undone after it in reverse order. */
function onCleanup(undo: () => unknown): void {
  cleanups.push(undo);
}

/** A client with a short command timeout and one retry, so that outages surface fast. */
function connect(url = server.url, options: RedisOptions = {}): Redis {
  const client = new Redis(url, { commandTimeout: COMMAND_TIMEOUT, maxRetriesPerRequest: 1, ...options });
  // connection errors are expected in the outage tests; they surface through the commands that fail
  client.on('error', () => undefined);
  onCleanup(() => client.disconnect());
  return client;
}

function redisStore(client = connect(), options: Partial<RedisLockStoreOptions> = {}): RedisLockStore {
  const store = new RedisLockStore({ client, keyPrefix: PREFIX, ...options });
  onCleanup(() => store.close());
  return store;
}

function lockManager(store: LockStore, options: Partial<LockManagerOptions> = {}): LockManager {
  const manager = new LockManager({ store, ...options });
  onCleanup(() => manager.close());
  return manager;
}

function names(key: string) {
  return resourceKeys(PREFIX, key);
}

/** Polls `condition` every 10 ms until it holds; fails after `timeout` ms. */
async function until(condition: () => boolean | Promise<boolean>, timeout = 5000): Promise<void> {
  const deadline = performance.now() + timeout;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeout} ms`);
    await sleep(10);
  }
}

/** Runs `operation`, returning what it threw (or `undefined`) and how long it took. */
async function timed(operation: () => Promise<unknown>): Promise<{ error: unknown; elapsed: number }> {
  const started = performance.now();
  try {
    await operation();
    return { error: undefined, elapsed: performance.now() - started };
  } catch (error) {
    return { error, elapsed: performance.now() - started };
  }
}

/** The same store, with every acquire and extend reply held back `delay` ms, and the time each request left. */
function slowReplies(store: LockStore, delay: number): { store: LockStore; sent: number[] } {
  const sent: number[] = [];
  const late = async <T>(request: () => Promise<T>): Promise<T> => {
    sent.push(performance.now());
    const reply = await request();
    await sleep(delay);
    return reply;
  };
  return {
    sent,
    store: {
      acquire: (request) => late(() => store.acquire(request)),
      extend: (key, token, ttl) => late(() => store.extend(key, token, ttl)),
      release: (key, token) => store.release(key, token),
      extendMany: (renewals) => store.extendMany(renewals),
      inspect: (key) => store.inspect(key),
      watch: (key) => store.watch(key),
      close: () => store.close(),
    },
  };
}

/** Records the request of every acquire that reaches `store`, so a test can see tokens the manager made. */
function recordAcquires(store: RedisLockStore): AcquireRequest[] {
  const requests: AcquireRequest[] = [];
  const acquire = store.acquire.bind(store);
  store.acquire = (request) => {
    requests.push(request);
    return acquire(request);
  };
  return requests;
}

/** The token of the lease a lock key holds (its value is the token, then the holder record after a newline). */
function tokenIn(value: string | null): string | undefined {
  return value?.replace(/^!/, '').split('\n')[0];
}

beforeAll(async () => {
  server = await startRedisServer();
  admin = new Redis(server.url);
});

beforeEach(async () => {
  await admin.flushall();
  await admin.script('FLUSH');
});

afterEach(async () => {
  for (const undo of cleanups.splice(0).reverse()) await undo();
});

afterAll(async () => {
  await admin.quit();
  await server.stop();
});

describe('RedisLockStore when the server forgets its scripts', () => {
  it('releases, extends and renews after SCRIPT FLUSH by sending the script again', async () => {
    const store = redisStore();
    const token = newToken();
    await store.acquire({ key: 'flushed', token, ttl: 1000, fencing: false });
    const lock = names('flushed').lock;

    await admin.script('FLUSH');
    expect(await store.extend('flushed', token, 60_000)).toBe(true);
    expect(await admin.pttl(lock)).toBeGreaterThan(50_000);

    await admin.script('FLUSH');
    expect(await store.extendMany([{ key: 'flushed', token, ttl: 90_000 }])).toEqual([true]);
    expect(await admin.pttl(lock)).toBeGreaterThan(80_000);

    await admin.script('FLUSH');
    expect(await store.release('flushed', token)).toBe(true);
    expect(await admin.exists(lock)).toBe(0);
  });

  it('grants a full lease after SCRIPT FLUSH: fence, extend, release', async () => {
    const manager = lockManager(redisStore());
    const first = await manager.acquire('flushed', { fencing: true });
    expect(await first.release()).toBe(true);

    await admin.script('FLUSH');
    expect(await admin.script('EXISTS', ...ALL_SCRIPTS.map((script) => script.sha))).toEqual(ALL_SCRIPTS.map(() => 0));
    const second = await manager.acquire('flushed', { fencing: true, ttl: 5000 });
    expect(second.fence).toBeGreaterThan(first.fence!);
    await second.extend(60_000);
    expect(await admin.pttl(names('flushed').lock)).toBeGreaterThan(50_000);
    expect(await second.release()).toBe(true);
  });

  it('grants a full lease after the server restarts empty on the same port', async () => {
    const restarted = await startRedisServer();
    onCleanup(() => restarted.stop());
    const client = connect(restarted.url);
    const manager = lockManager(redisStore(client));
    const before = await manager.acquire('restarted', { fencing: true, ttl: 30_000 });

    const reconnected = new Promise((resolve) => client.once('ready', resolve));
    await restarted.stop();
    await restarted.start();
    await reconnected;

    // the lease died with the server's data; the holder hears so instead of believing it still holds it
    const lost = await before.extend().catch((error: unknown) => error);
    expect(lost).toBeInstanceOf(LockLostError);
    expect((lost as LockLostError).reason).toBe('taken');

    const after = await manager.acquire('restarted', { fencing: true, ttl: 5000 });
    expect(typeof after.fence).toBe('number');
    await after.extend(60_000);
    expect(await after.release()).toBe(true);
  });
});

describe('RedisLockStore fences across data loss', () => {
  it('grants a fence above every earlier one after the server restarts empty', async () => {
    const restarted = await startRedisServer();
    onCleanup(() => restarted.stop());
    const client = connect(restarted.url);
    const manager = lockManager(redisStore(client));
    const before: number[] = [];
    for (let i = 0; i < 5; i++) {
      const lock = await manager.acquire('fenced', { fencing: true });
      before.push(lock.fence!);
      await lock.release();
    }

    const reconnected = new Promise((resolve) => client.once('ready', resolve));
    await restarted.stop();
    await restarted.start();
    await reconnected;

    // the counter is gone with the data; a fresh one from 1 would make the new holder look stale
    const after = await manager.acquire('fenced', { fencing: true });
    expect(after.fence).toBeGreaterThan(Math.max(...before));
    expect(Number.isSafeInteger(after.fence)).toBe(true);
    expect((await manager.inspect('fenced')).fence).toBe(after.fence);
    await after.release();
  });
});

describe('RedisLockStore when Redis goes away mid-test', () => {
  let outage: RedisServerHandle;
  let client: Redis;
  let store: RedisLockStore;
  let manager: LockManager;
  let held: Lock;

  beforeEach(async () => {
    outage = await startRedisServer();
    onCleanup(() => outage.stop());
    client = connect(outage.url);
    store = redisStore(client);
    manager = lockManager(store);
    // the setup is not under test: on a loaded machine the first check of a fresh server can outlast this file's
    // 500 ms command timeout, and a check that failed runs again with the next acquisition
    for (let attempt = 1; ; attempt++) {
      try {
        held = await manager.acquire('held', { ttl: 30_000 });
        break;
      } catch (error) {
        if (!(error instanceof LockStoreError) || attempt === 5) throw error;
      }
    }
  });

  const operations: Array<[string, () => Promise<unknown>]> = [
    ['store.acquire', () => store.acquire({ key: 'free', token: newToken(), ttl: 1000, fencing: true })],
    ['store.release', () => store.release('held', held.token)],
    ['store.extend', () => store.extend('held', held.token, 1000)],
    ['store.inspect', () => store.inspect('held')],
    ['store.verify', () => store.verify()],
    ['LockManager.acquire with a wait', () => manager.acquire('free', { wait: 10_000 })],
    ['LockManager.acquire with a wait on a held key', () => manager.acquire('held', { wait: 10_000 })],
    ['LockManager.inspect', () => manager.inspect('held')],
    ['Lock.extend', () => held.extend()],
    ['Lock.release', () => held.release()],
  ];

  it.each(operations)(
    '%s rejects with LockStoreError within the command timeout once the server is stopped',
    async (_name, operation) => {
      await outage.stop();
      const { error, elapsed } = await timed(operation);
      expect(error).toBeInstanceOf(LockStoreError);
      expect(error).not.toBeInstanceOf(LockNotAcquiredError);
      expect(elapsed).toBeLessThan(COMMAND_TIMEOUT + MARGIN);
      expect(inspect(error, { depth: null })).not.toContain(held.token);
    },
  );

  it('rejects every operation with LockStoreError within the command timeout while the server is frozen', async () => {
    const pid = Number(/process_id:(\d+)/.exec(await client.info('server'))![1]);
    const renewed = await manager.acquire('renewed', { ttl: 600, autoRenew: true });
    let lostAt = Infinity;
    renewed.signal.addEventListener('abort', () => (lostAt = performance.now()));
    process.kill(pid, 'SIGSTOP');
    onCleanup(() => process.kill(pid, 'SIGCONT'));

    const outcomes = await Promise.all(
      operations.map(async ([name, operation]) => {
        const { error, elapsed } = await timed(operation);
        return {
          name,
          error: (error as Error | undefined)?.constructor.name,
          inTime: elapsed < COMMAND_TIMEOUT + MARGIN,
        };
      }),
    );
    expect(outcomes).toEqual(operations.map(([name]) => ({ name, error: 'LockStoreError', inTime: true })));

    // renewals time out too: the holder hears it lost the lease when its validity ends, not later
    const reason = await within(abortReason(renewed.signal), 600 + MARGIN, "the signal's abort");
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('store-unreachable');
    expect(lostAt - renewed.validUntil).toBeLessThan(100);
    expect(inspect(reason, { depth: null })).not.toContain(renewed.token);
  });

  it('fails a waiter with LockStoreError, not LockNotAcquiredError, soon after Redis stops while it waits', async () => {
    const waiterStore = redisStore(connect(outage.url));
    const attempts = recordAcquires(waiterStore);
    const waiter = lockManager(waiterStore);
    const backoff = 100;
    const waiting = waiter
      .acquire('held', { wait: 20_000, retry: { minDelay: backoff, maxDelay: backoff } })
      .catch((error: unknown) => error);
    // a retry was sent: the waiter is in its retry loop, not in its first attempt
    await until(() => attempts.length >= 2);

    await outage.stop();
    const stoppedAt = performance.now();
    const error = await waiting;
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as LockStoreError).key).toBe('held');
    expect(performance.now() - stoppedAt).toBeLessThan(backoff + COMMAND_TIMEOUT + MARGIN);
  });
});

describe('RedisLockStore acquire cost', () => {
  it('acquires a free key with one SET NX PX, and with a fence by one EVALSHA that adds TIME and one SET', async () => {
    const manager = lockManager(redisStore());
    // the check a manager runs before its first grant: connected, scripts loaded
    await manager.verify();
    const locks: Lock[] = [];
    const plain = await commandsDuring(admin, async () => {
      for (let i = 0; i < 10; i++) locks.push(await manager.acquire(`plain:${i}`, { ttl: 10_000 }));
    });
    expect(plain).toEqual({ set: 10 });
    // the holder record travels inside the lease: inspect() still shows it
    expect((await manager.inspect('plain:3')).holder).toMatchObject({ pid: process.pid });

    await admin.script('LOAD', ACQUIRE.lua);
    await admin.script('LOAD', RELEASE.lua);
    const fenced = await commandsDuring(admin, async () => {
      for (let i = 0; i < 10; i++) locks.push(await manager.acquire(`fenced:${i}`, { ttl: 10_000, fencing: true }));
    });
    // SET NX PX of the lease, TIME for the clock floor, SET ... GET of the counter
    expect(fenced).toEqual({ evalsha: 10, set: 20, time: 10 });
    const released = await commandsDuring(admin, () => manager.releaseAll(locks));
    // nobody waited: GET and DEL in the release script, no line, no notice
    expect(released).toEqual({ evalsha: 20, get: 20, del: 20 });
  });

  it('renews a batch of 200 leases with one script call, and tells a key of another type from a lost lease', async () => {
    const store = redisStore();
    const tokens = Array.from({ length: 200 }, () => newToken());
    await Promise.all(tokens.map((token, i) => store.acquire({ key: `batch:${i}`, token, ttl: 5000, fencing: false })));
    await admin.script('LOAD', EXTEND_MANY.lua);
    let outcomes: Array<boolean | Error> = [];
    const used = await commandsDuring(admin, async () => {
      outcomes = await store.extendMany(tokens.map((token, i) => ({ key: `batch:${i}`, token, ttl: 9000 })));
    });
    expect(outcomes).toEqual(tokens.map(() => true));
    expect(used).toEqual({ evalsha: 1, get: 200, pexpire: 200 });

    // a key of another type fails its own lease with the store error that says so; the others renew
    await admin.del(names('batch:7').lock);
    await admin.hset(names('batch:7').lock, 'field', 'value');
    const [sixth, seventh, eighth] = await store.extendMany(
      [6, 7, 8].map((i) => ({ key: `batch:${i}`, token: tokens[i], ttl: 9000 })),
    );
    expect([sixth, eighth]).toEqual([true, true]);
    expect(seventh).toBeInstanceOf(LockStoreError);
    expect((seventh as Error).message).toMatch(/holds another type of value/);
    await admin.del(names('batch:7').lock);
  });

  it('answers an acquire of a held key with a failed SET NX and one EVALSHA', async () => {
    const holder = lockManager(redisStore());
    const contender = lockManager(redisStore());
    const lock = await holder.acquire('busy', { ttl: 10_000 });
    await admin.script('LOAD', ACQUIRE.lua);
    await contender.verify();
    const used = await commandsDuring(admin, async () => {
      for (let i = 0; i < 10; i++) expect(await contender.tryAcquire('busy')).toBeNull();
    });
    // the plain SET NX is refused; the script tries SET NX once more in case the key was freed in between,
    // learning from the same command what holds the key (GET), then for how long (PTTL)
    expect(used).toEqual({ set: 20, evalsha: 10, pttl: 10 });
    // a caller that does not wait leaves no mark: the holder's release stays one GET and one DEL
    expect(await admin.get(names('busy').lock)).toMatch(/^[0-9a-f]{32}\n/);
    await lock.release();
  });

  it('releases an unmarked lease by its lock key alone, and a marked one by the full release until nobody marks it', async () => {
    const client = connect();
    const holder = redisStore(client);
    const waiter = redisStore();
    const scripts = new Map([
      [RELEASE_UNMARKED.sha, 'unmarked'],
      [RELEASE.sha, 'full'],
    ]);
    const sent: Array<{ script: string | undefined; keys: unknown }> = [];
    const evalsha = client.evalsha.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as Record<string, unknown>).evalsha = (...args: unknown[]) => {
      sent.push({ script: scripts.get(String(args[0])), keys: args[1] });
      return evalsha(...args);
    };
    const cycle = async (marked: boolean) => {
      const token = newToken();
      expect((await holder.acquire({ key: 'spell', token, ttl: 10_000, fencing: false })).acquired).toBe(true);
      if (marked) {
        const waiting = { again: false, ttl: 10_000, next: true };
        const request = { key: 'spell', token: newToken(), ttl: 10_000, fencing: false, waiting };
        expect((await waiter.acquire(request)).acquired).toBe(false);
        expect(await admin.get(names('spell').lock)).toMatch(/^!/);
      }
      sent.length = 0;
      expect(await holder.release('spell', token)).toBe(true);
      // whatever the script, the lease is gone or passed on: never left with the releaser's token
      expect(String(await admin.get(names('spell').lock))).not.toContain(token);
      return sent.map(({ script, keys }) => `${script}/${String(keys)}`);
    };
    // nobody waits: one script on the lock key alone
    expect(await cycle(false)).toEqual(['unmarked/1']);
    // a waiter marked it: the short script leaves it, the full one passes it on
    expect(await cycle(true)).toEqual(['unmarked/1', 'full/3']);
    // the key is waited for lately: its next release is the full one at once
    expect(await cycle(true)).toEqual(['full/3']);
    // a full release that found no mark ends the spell
    expect(await cycle(false)).toEqual(['full/3']);
    expect(await cycle(false)).toEqual(['unmarked/1']);
    // a lease no longer ours is not released by either
    const token = newToken();
    await holder.acquire({ key: 'spell', token, ttl: 10_000, fencing: false });
    await admin.del(names('spell').lock);
    expect(await holder.release('spell', token)).toBe(false);
  });

  it('sends a waiting caller of a key refused at its last first ask straight to the script, until the key is granted again', async () => {
    const holderStore = redisStore();
    const client = connect();
    const store = redisStore(client);
    const sent: string[] = [];
    for (const command of ['set', 'evalsha'] as const) {
      const original = client[command].bind(client) as (...args: unknown[]) => Promise<unknown>;
      (client as unknown as Record<string, unknown>)[command] = (...args: unknown[]) => {
        sent.push(command);
        return original(...args);
      };
    }
    const ask = async (waits: boolean) => {
      sent.length = 0;
      const token = newToken();
      const waiting = waits ? { again: false, ttl: 1000 } : undefined;
      const result = await store.acquire({ key: 'refused', token, ttl: 5000, fencing: false, waiting });
      return { result, token, sent: [...sent] };
    };
    const held = newToken();
    expect((await holderStore.acquire({ key: 'refused', token: held, ttl: 5000, fencing: false })).acquired).toBe(true);

    // the first ask tries the plain SET NX; once refused, a caller that waits asks by the script alone
    expect(await ask(true)).toMatchObject({ result: { acquired: false }, sent: ['set', 'evalsha'] });
    expect(await ask(true)).toMatchObject({ result: { acquired: false }, sent: ['evalsha'] });
    // a caller that does not wait keeps the plain SET NX first (it takes no place in the line)
    expect(await ask(false)).toMatchObject({ result: { acquired: false }, sent: ['set', 'evalsha'] });

    expect(await holderStore.release('refused', held)).toBe(true);
    await until(async () => (await admin.exists(names('refused').lock)) === 0);
    const granted = await ask(true);
    expect(granted).toMatchObject({ result: { acquired: true }, sent: ['evalsha'] });
    expect(await store.release('refused', granted.token)).toBe(true);
    // granted at its first ask: the key is free again, and the plain SET NX comes back
    expect(await ask(true)).toMatchObject({ result: { acquired: true }, sent: ['set'] });
  });

  it('asks no PTTL when the lease its own release granted a waiter elsewhere refuses it, and tells the least it has left', async () => {
    const [releaser, waiterStore] = [redisStore(), redisStore()];
    const held = newToken();
    const ttl = 10_000;
    expect((await releaser.acquire({ key: 'passed', token: held, ttl, fencing: false })).acquired).toBe(true);
    const waiter = lockManager(waiterStore);
    let contended = false;
    waiter.on('contended', () => (contended = true));
    const waiting = waiter.acquire('passed', { ttl, wait: 10_000 });
    await until(() => contended);
    await until(async () => (await admin.llen(names('passed').line)) === 1);
    await until(async () => (await channelListeners(admin, names('passed').channel)) === 1);
    const released = performance.now();
    expect(await releaser.release('passed', held)).toBe(true);
    // granted straight to the waiter's request in the line, which its notice told
    const next = await waiting;
    const left = await admin.pttl(names('passed').lock);
    let refused: Awaited<ReturnType<RedisLockStore['acquire']>> | undefined;
    const used = await commandsDuring(admin, async () => {
      const waits = { again: false, ttl: 1000, next: true };
      refused = await releaser.acquire({ key: 'passed', token: newToken(), ttl, fencing: false, waiting: waits });
    });
    const asked = performance.now();
    expect(refused?.acquired).toBe(false);
    // the plain SET NX, then the script: SET NX GET and a place in the line, and no PTTL
    expect(used).toMatchObject({ set: 2, evalsha: 1, rpush: 1 });
    expect(used).not.toHaveProperty('pttl');
    // never more than the lease has left; at least its ttl less the time since the release was sent
    const remaining = refused?.acquired === false ? refused.remainingTtl : undefined;
    expect(remaining).toBeLessThanOrEqual(left);
    expect(remaining).toBeGreaterThanOrEqual(ttl - (asked - released) - 1);
    await next.release();
  });

  it('dates the lease from just before the request was sent, not from when the reply came', async () => {
    const slow = slowReplies(redisStore(), 200);
    const manager = lockManager(slow.store);
    const ttl = 5000;
    const validity = ttl - clockDrift(ttl);

    const started = performance.now();
    const lock = await manager.acquire('slow', { ttl });
    expect(performance.now() - started).toBeGreaterThanOrEqual(195);
    expect(lock.validUntil).toBeGreaterThanOrEqual(started + validity);
    expect(lock.validUntil).toBeLessThanOrEqual(slow.sent[0] + validity);

    const extending = performance.now();
    await lock.extend(8000);
    expect(lock.validUntil).toBeGreaterThanOrEqual(extending + 8000 - clockDrift(8000));
    expect(lock.validUntil).toBeLessThanOrEqual(slow.sent[1] + 8000 - clockDrift(8000));
    await lock.release();
  });
});

describe('RedisLockStore uncontended path (a plain SET NX PX)', () => {
  /** A client whose first `command` reaches the server and then loses its reply, as a cut connection would. */
  function losingFirstReply(command: 'set' | 'evalsha'): Redis {
    const client = connect();
    let lost = false;
    return new Proxy(client, {
      get(target, property, receiver) {
        if (property !== command || lost) return Reflect.get(target, property, receiver) as unknown;
        return async (...args: unknown[]) => {
          await (target[command] as (...a: unknown[]) => Promise<unknown>)(...args);
          lost = true;
          throw new Error('Connection is closed.');
        };
      },
    });
  }

  it("refuses a key another token holds, with the holder's remaining lease", async () => {
    const [holder, rival] = [redisStore(), redisStore()];
    const token = newToken();
    expect(await holder.acquire({ key: 'plain', token, ttl: 10_000, fencing: false })).toEqual({ acquired: true });
    const refused = await rival.acquire({ key: 'plain', token: newToken(), ttl: 10_000, fencing: false });
    expect(refused.acquired).toBe(false);
    expect(!refused.acquired && refused.remainingTtl).toBeGreaterThan(9000);
    expect(tokenIn(await admin.get(names('plain').lock))).toBe(token);
    // nor does a stale token release or extend it
    expect(await rival.release('plain', newToken())).toBe(false);
    expect(await rival.extend('plain', newToken(), 10_000)).toBe(false);
  });

  it.each([false, true])(
    'grants its own token again after the reply of its grant was lost (fencing %s), holder record kept',
    async (fencing) => {
      // a fenced grant is a script: load them first, so its EVALSHA is the one call that grants
      const store = redisStore(losingFirstReply(fencing ? 'evalsha' : 'set'));
      await store.verify();
      const token = newToken();
      const holder = encodeHolder('Retry.run');
      const key = `lost-reply-${fencing}`;
      // the grant was applied; only its answer is gone
      await expect(store.acquire({ key, token, ttl: 10_000, fencing, holder })).rejects.toBeInstanceOf(LockStoreError);
      expect(tokenIn(await admin.get(names(key).lock))).toBe(token);
      const again = await store.acquire({ key, token, ttl: 10_000, fencing, holder });
      expect(again.acquired).toBe(true);
      if (fencing) expect(again).toEqual({ acquired: true, fence: Number(await admin.get(names(key).fence)) });
      const state = await store.inspect(key);
      expect(state).toMatchObject({ held: true, holder });
      expect(state.remainingTtl).toBeGreaterThan(9000);
      expect(await store.release(key, token)).toBe(true);
      expect(await admin.exists(names(key).lock)).toBe(0);
    },
  );

  it('keeps the mark of a waiter through a retry of its own grant, so the release still passes the key on', async () => {
    const [holder, waiter] = [redisStore(), redisStore()];
    const token = newToken();
    await holder.acquire({ key: 'marked', token, ttl: 10_000, fencing: false });
    const waiting = { again: false, ttl: 10_000, next: true };
    expect(
      (await waiter.acquire({ key: 'marked', token: newToken(), ttl: 10_000, fencing: false, waiting })).acquired,
    ).toBe(false);
    expect(await admin.get(names('marked').lock)).toMatch(/^!/);
    expect((await holder.acquire({ key: 'marked', token, ttl: 10_000, fencing: false })).acquired).toBe(true);
    expect(await admin.get(names('marked').lock)).toMatch(/^!/);
    expect((await holder.inspect('marked')).held).toBe(true);
    expect(await holder.release('marked', token)).toBe(true);
    // the release granted the waiter first in line directly; it did not listen (it never watched), so it was
    // passed over as gone, in the same call: the key is free, its place and offer spent
    expect(await admin.exists(names('marked').lock, names('marked').line)).toBe(0);
  });

  it('never reads a line an older version left under the old names: its offer is not granted, its place not served', async () => {
    const base = names('versions').lock;
    // what a process of the previous encoding leaves while it waits: a bare owner id, its offer in a hash
    const oldOwner = 'aaaaaaaaaaaaaaaa';
    const oldToken = newToken();
    await admin.rpush(`${base}:line`, oldOwner);
    await admin.hset(`${base}:offers`, oldOwner, `1 ${oldToken} 30000 0 `);
    const holder = await lockManager(redisStore()).acquire('versions', { ttl: 10_000 });
    const waiter = lockManager(redisStore());
    let contended = false;
    waiter.on('contended', () => (contended = true));
    const waiting = waiter.acquire('versions', { ttl: 10_000, wait: 10_000 });
    await until(() => contended);
    await until(async () => (await admin.llen(names('versions').line)) === 1);
    await holder.release();
    const next = await waiting;
    // the key went to the waiter in the new line; the old entry and its offer were neither granted nor touched
    expect(await admin.get(base)).not.toContain(oldToken);
    expect(await admin.lrange(`${base}:line`, 0, -1)).toEqual([oldOwner]);
    expect(await admin.hget(`${base}:offers`, oldOwner)).toBe(`1 ${oldToken} 30000 0 `);
    await next.release();
    expect(await admin.exists(base)).toBe(0);
  });
});

describe('RedisLockStore keys', () => {
  it.each(ADVERSARIAL_KEYS.map((key) => [JSON.stringify(key).slice(0, 24), key]))(
    'keeps the lock, fence, holder and release channel of %s in one cluster hash slot',
    async (_label, key) => {
      const store = redisStore();
      const listener = connect();
      // hear the channel by pattern, so the test sees the name the store really publishes on
      const heard = new Promise<string>((resolve) => listener.on('pmessage', (_pattern, channel) => resolve(channel)));
      await listener.psubscribe(`${PREFIX}*`);
      const token = newToken();
      expect((await store.acquire({ key, token, ttl: 10_000, fencing: true, holder: '{}' })).acquired).toBe(true);
      // a waiter elsewhere takes a place in the line and marks the lease, so that its release sends a notice
      const waiting = { again: false, ttl: 10_000, next: true };
      const refused = await redisStore().acquire({ key, token: newToken(), ttl: 10_000, fencing: true, waiting });
      expect(refused.acquired).toBe(false);
      const written = await admin.keys(`${PREFIX}*`);
      // lock, fence, and the line with the waiter's offer in its entry
      expect(written).toHaveLength(3);
      expect(await store.release(key, token)).toBe(true);
      const channel = await heard;
      expect(new Set([...written, channel].map((name) => calculateSlot(name))).size).toBe(1);
    },
  );

  it('never gives two distinct user keys the same Redis key', async () => {
    const store = redisStore();
    const keys = [...ADVERSARIAL_KEYS, '%257B', '%7D', '%', '{%7B}', 'a}:fence', 'a', 'a:fence', '}:released'];
    for (const key of keys) {
      expect((await store.acquire({ key, token: newToken(), ttl: 10_000, fencing: true })).acquired).toBe(true);
    }
    expect(await admin.keys(`${PREFIX}*`)).toHaveLength(keys.length * 2);
  });

  it.each(['{', '}', 'app:{tenant}:', 'a}'])('refuses the key prefix %p with LockConfigurationError', (keyPrefix) => {
    const client = connect();
    expect(() => new RedisLockStore({ client, keyPrefix })).toThrow(LockConfigurationError);
  });
});

describe('RedisLockStore tokens', () => {
  it('makes 10,000 distinct tokens of 32 hex digits', () => {
    const tokens = Array.from({ length: 10_000 }, () => newToken());
    expect(new Set(tokens).size).toBe(10_000);
    expect(tokens.filter((token) => !/^[0-9a-f]{32}$/.test(token))).toEqual([]);
  });

  it('gives two acquisitions of one key in a row different tokens, each the one stored in Redis', async () => {
    const manager = lockManager(redisStore());
    const first = await manager.acquire('again');
    expect(tokenIn(await admin.get(names('again').lock))).toBe(first.token);
    await first.release();
    const second = await manager.acquire('again');
    expect(tokenIn(await admin.get(names('again').lock))).toBe(second.token);
    expect(second.token).not.toBe(first.token);
    await second.release();
  });

  /** Locks and the errors of every kind the library throws around them, with each token that was in play. */
  async function tokensAndErrors(): Promise<{ locks: Lock[]; errors: Error[]; tokens: string[] }> {
    const store = redisStore();
    const requests = recordAcquires(store);
    const manager = lockManager(store);
    const other = lockManager(redisStore());
    const errors: Error[] = [];
    const fail = (promise: Promise<unknown>) =>
      promise.then(
        () => {
          throw new Error('expected a rejection');
        },
        (error: Error) => errors.push(error),
      );

    const released = await manager.acquire('released', { fencing: true });
    await fail(other.acquire('released', { wait: 100 }));
    await released.release();
    await fail(released.extend());

    const taken = await manager.acquire('taken');
    await admin.del(names('taken').lock);
    await fail(taken.extend());

    const expired = await manager.acquire('expired', { ttl: 100 });
    errors.push((await within(abortReason(expired.signal), 1000, "the signal's abort")) as Error);

    const clobbered = await manager.acquire('clobbered');
    await admin.del(names('clobbered').lock);
    await admin.hset(names('clobbered').lock, 'field', 'value');
    await fail(clobbered.extend());
    await fail(clobbered.release());
    await fail(manager.acquire('clobbered'));

    const locks = [released, taken, expired, clobbered];
    return { locks, errors, tokens: [...locks.map((lock) => lock.token), ...requests.map((request) => request.token)] };
  }

  it('keeps the token out of JSON.stringify(lock), util.inspect(lock) and every error message', async () => {
    const { locks, errors, tokens } = await tokensAndErrors();
    expect(errors.map((error) => error.constructor.name)).toEqual([
      'LockNotAcquiredError',
      'LockLostError',
      'LockLostError',
      'LockLostError',
      'LockStoreError',
      'LockStoreError',
      'LockStoreError',
    ]);
    const leaks = (text: string) => tokens.filter((token) => text.includes(token));
    for (const lock of locks) {
      expect(leaks(JSON.stringify(lock))).toEqual([]);
      expect(leaks(inspect(lock, { showHidden: true, depth: null }))).toEqual([]);
      expect(leaks(`${lock}`)).toEqual([]);
    }
    for (const error of errors) expect(leaks(`${error.message}\n${error.stack}`)).toEqual([]);
  });

  it('keeps the token out of logged errors too, including the Redis client error they wrap', async () => {
    const { errors, tokens } = await tokensAndErrors();
    for (const error of errors) {
      expect(tokens.filter((token) => inspect(error, { depth: null, showHidden: true }).includes(token))).toEqual([]);
    }
  });
});

describe('RedisLockStore and keys of another type', () => {
  it('refuses a hash at the exact lock key with LockStoreError that says so, and overwrites nothing', async () => {
    // the message names the Redis key where the application lets messages name resolved keys
    const manager = lockManager(redisStore(), { exposeResolvedKeys: true });
    const { lock, fence } = names('typed');
    await admin.hset(lock, 'owner', 'another feature');

    for (const attempt of [
      () => manager.acquire('typed', { wait: 1000, fencing: true }),
      () => manager.inspect('typed'),
    ]) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LockStoreError);
      expect((error as Error).message).toMatch(/holds another type/);
      expect((error as Error).message).toContain(lock);
    }
    expect(await admin.type(lock)).toBe('hash');
    expect(await admin.hgetall(lock)).toEqual({ owner: 'another feature' });
    expect(await admin.exists(fence)).toBe(0);
  });

  it('refuses a fence counter of another type without leaving a lease behind', async () => {
    const store = redisStore();
    const { lock, fence } = names('typed-fence');
    await admin.hset(fence, 'owner', 'another feature');

    const error = await store
      .acquire({ key: 'typed-fence', token: newToken(), ttl: 10_000, fencing: true })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/holds another type/);
    expect(await admin.exists(lock)).toBe(0);
    expect(await admin.hgetall(fence)).toEqual({ owner: 'another feature' });
  });
});

describe('RedisLockStore permissions', () => {
  it('verify() loads every script for a user that may run them', async () => {
    await redisStore().verify();
    expect(await admin.script('EXISTS', ...ALL_SCRIPTS.map((script) => script.sha))).toEqual(ALL_SCRIPTS.map(() => 1));
  });

  it('verify() fails with LockStoreError naming the permission when the user may not run scripts', async () => {
    await admin.call('ACL', 'SETUSER', 'limited', 'on', '>pw', '~*', '+@all', '-@scripting');
    const store = redisStore(connect(server.url, { username: 'limited', password: 'pw' }));

    const error = await store.verify().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/may not run scripts/);
    expect((error as Error).message).toMatch(/\+@scripting|\+evalsha/);
    expect((error as Error).message).toMatch(/NOPERM/);

    // a fenced grant is a script (a plain one is a SET NX PX, whose release is a script again)
    const acquired = await store
      .acquire({ key: 'k', token: newToken(), ttl: 1000, fencing: true })
      .catch((caught: unknown) => caught);
    expect(acquired).toBeInstanceOf(LockStoreError);
  });

  it('serves every operation, startup checks included, for a user with only the commands docs/stores.md lists', async () => {
    await admin.call('ACL', 'SETUSER', 'least', 'on', '>pw', ...lockUserRules(PREFIX));
    const least = () => redisStore(connect(server.url, { username: 'least', password: 'pw' }));
    const failures: unknown[] = [];
    const [holder, waiter] = [least(), least()].map((store) => {
      const manager = lockManager(store, { logger: { warn: (text) => failures.push(text), error: () => undefined } });
      manager.on('store-error', ({ error }) => failures.push(error));
      return manager;
    });
    expect(await holder.verify()).toEqual([]);
    expect(await holder.store.health?.()).toEqual({ scriptsLoaded: true });
    const lock = await holder.acquire('least', { ttl: 10_000, fencing: true, label: 'Least.run' });
    // the waiter takes a place in the line and listens for the release notice
    const waiting = waiter.acquire('least', { wait: 5000, fencing: true, retry: { minDelay: 3000, maxDelay: 3000 } });
    await lock.extend(10_000);
    expect(await waiter.inspect('least')).toMatchObject({ held: true, fence: lock.fence });
    const released = performance.now();
    await lock.release();
    const next = await waiting;
    // woken by the release notice, long before its 3 s backoff
    expect(performance.now() - released).toBeLessThan(1500);
    expect(next.fence).toBeGreaterThan(lock.fence!);
    await next.release();
    // permits too: a semaphore's and a readers-writer lock's, with a waiter woken by the release
    const permits = await Promise.all([0, 1].map(() => holder.acquire('least:quota', { limit: 2, fencing: true })));
    const third = waiter.acquire('least:quota', { limit: 2, wait: 5000, retry: { minDelay: 3000, maxDelay: 3000 } });
    expect(await waiter.inspect('least:quota')).toMatchObject({ held: true, holders: 2, limit: 2 });
    const freed = performance.now();
    await permits[0].release();
    await (await third).release();
    expect(performance.now() - freed).toBeLessThan(1500);
    await permits[1].release();
    const reader = await holder.acquire('least:prices', { mode: 'read' });
    const writer = waiter.acquire('least:prices', { mode: 'write', wait: 5000 });
    await reader.release();
    await (await writer).release();
    expect(failures).toEqual([]);
  });

  it('verify() on a LockManager of its own hands what the store could not check to its logger, and returns it', async () => {
    await admin.call('ACL', 'SETUSER', 'unconfigured', 'on', '>pw', '~*', '&*', '+@all', '-config');
    const warnings: string[] = [];
    const logger = { warn: (message: string) => warnings.push(message), error: () => undefined };
    const store = redisStore(connect(server.url, { username: 'unconfigured', password: 'pw' }));
    const returned = await lockManager(store, { logger }).verify();
    expect(warnings).toEqual([expect.stringMatching(/^Could not check the eviction policy of Redis 127\.0\.0\.1:/)]);
    expect(returned).toEqual(warnings);
  });

  it('releases for a user without pub/sub rights; a waiter elsewhere still gets the lock by its backoff', async () => {
    await admin.call('ACL', 'SETUSER', 'quiet', 'on', '>pw', '~*', 'resetchannels', '+@all');
    const quiet = () => redisStore(connect(server.url, { username: 'quiet', password: 'pw' }));
    const holder = lockManager(quiet());
    const waiter = lockManager(quiet());
    const lock = await holder.acquire('quiet', { ttl: 10_000 });
    const waiting = waiter.acquire('quiet', { wait: 5000, retry: { minDelay: 50, maxDelay: 100 } });

    expect(await lock.release()).toBe(true);
    const next = await waiting;
    expect(tokenIn(await admin.get(names('quiet').lock))).toBe(next.token);
    expect(await next.release()).toBe(true);
  });

  it('fails verify() and the first acquire on a wrong password, promptly instead of hanging', async () => {
    await admin.call('ACL', 'SETUSER', 'guarded', 'on', '>right', '~*', '+@all');
    const store = redisStore(connect(server.url, { username: 'guarded', password: 'wrong' }));

    const verified = await timed(() => store.verify());
    expect(verified.error).toBeInstanceOf(LockStoreError);
    expect((verified.error as Error).message).toMatch(/WRONGPASS/);
    expect(verified.elapsed).toBeLessThan(COMMAND_TIMEOUT + MARGIN);

    const acquired = await timed(() => lockManager(store).acquire('k', { wait: 5000 }));
    expect(acquired.error).toBeInstanceOf(LockStoreError);
    expect(acquired.elapsed).toBeLessThan(COMMAND_TIMEOUT + MARGIN);
  });

  it('keeps the password out of the verify() error and its cause, which a logger prints in full', async () => {
    await admin.call('ACL', 'SETUSER', 'secretive', 'on', '>right-secret', '~*', '+@all');
    const store = redisStore(connect(server.url, { username: 'secretive', password: 'wrong-secret' }));
    const error = await store.verify().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockStoreError);
    const printed = inspect(error, { depth: null, showHidden: true });
    expect(printed).toMatch(/WRONGPASS/);
    expect(printed).not.toContain('wrong-secret');
  });
});

describe('Lock handle on Redis', () => {
  let manager: LockManager;

  beforeEach(() => {
    manager = lockManager(redisStore());
  });

  it('resolves true for the first release() and false for the second', async () => {
    const lock = await manager.acquire('twice');
    expect(await lock.release()).toBe(true);
    expect(await admin.exists(names('twice').lock)).toBe(0);
    expect(await lock.release()).toBe(false);
  });

  it('rejects extend() after release() with LockLostError "released", and re-creates nothing', async () => {
    const lock = await manager.acquire('released');
    await lock.release();
    const error = await lock.extend().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as LockLostError).reason).toBe('released');
    expect(await admin.exists(names('released').lock)).toBe(0);
  });

  it('rejects extend() with LockLostError "taken" and aborts the signal when the key was deleted', async () => {
    const lock = await manager.acquire('deleted', { ttl: 10_000 });
    await admin.del(names('deleted').lock);
    const error = await lock.extend().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as LockLostError).reason).toBe('taken');
    expect(lock.signal.aborted).toBe(true);
    expect(lock.signal.reason).toBe(error);
    expect(lock.isHeld).toBe(false);
    expect(await admin.exists(names('deleted').lock)).toBe(0);
  });

  it('tells the holder of using() its lease was lost when the store forgot it before the first renewal', async () => {
    const warnings: string[] = [];
    const logged = lockManager(redisStore(), {
      logger: { warn: (message) => warnings.push(message), error: (message) => warnings.push(message) },
    });
    let signal: AbortSignal | undefined;
    await logged.using(
      'forgotten',
      async (lock) => {
        signal = lock.signal;
        // as a restart without persistence would: the lease is gone, the holder cannot know yet
        await admin.del(names('forgotten').lock);
      },
      { ttl: 30_000 },
    );
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(LockLostError);
    expect((signal?.reason as LockLostError).reason).toBe('taken');
    // one warning: the loss, with how long the lease had been held
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain((signal?.reason as LockLostError).message);
  });

  it('does not report a lease lost when release() follows a loss already signalled', async () => {
    const warnings: string[] = [];
    const logged = lockManager(redisStore(), {
      logger: { warn: (message) => warnings.push(message), error: (message) => warnings.push(message) },
    });
    const lock = await logged.acquire('expired-first', { ttl: 200 });
    const reason = await within(abortReason(lock.signal), 200 + MARGIN, "the signal's abort");
    // the local validity ends a little before the server's expiry: wait for the server too
    await until(async () => (await admin.exists(names('expired-first').lock)) === 0);
    expect(await lock.release()).toBe(false);
    expect(lock.signal.reason).toBe(reason);
    expect(warnings).toHaveLength(1);
  });

  it('aborts the signal with "expired" when a lease without auto-renew outlives its TTL', async () => {
    const started = performance.now();
    const lock = await manager.acquire('short', { ttl: 300, autoRenew: false });
    const reason = await within(abortReason(lock.signal), 300 + MARGIN, "the signal's abort");
    expect(performance.now() - started).toBeGreaterThanOrEqual(300 - clockDrift(300) - 1);
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('expired');
    expect(lock.isHeld).toBe(false);
    expect(lock.remainingTime).toBe(0);
  });
});
