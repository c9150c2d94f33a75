import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { LockNotAcquiredError } from '../../../lib/errors/lock-not-acquired.error.js';
import { LockManager } from '../../../lib/core/lock-manager.js';
import type { Lock } from '../../../lib/core/lock.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../../lib/stores/redis/resource-keys.js';
import { channelListeners } from '../../support/channel-listeners.js';
import { startChild, type ChildHandle } from '../../support/child-process.js';
import { storedToken } from '../../support/stored-token.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';

const rivalProgram = fileURLToPath(new URL('./late-grants.rival.ts', import.meta.url));
const KEY = 'direct';
/** Waiters here would look again only after this long on their own: anything sooner is the release's doing. */
const SLOW_RETRY = { minDelay: 3000, maxDelay: 3000 };

/**
 * A release grants the key straight to the process first in line (its waiter's request stands there): the
 * waiter starts without another request. These tests are about the ways that waiter may be gone.
 */
describe('a release that grants the lease to the waiter first in line', () => {
  let prefix: string;
  let admin: Redis;
  let dir: string;
  const managers: LockManager[] = [];
  const children: ChildHandle[] = [];

  beforeEach(() => {
    prefix = uniquePrefix();
    admin = new Redis(testRedisUrl());
    dir = mkdtempSync(join(tmpdir(), 'nestjs-lock-direct-'));
  });

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((manager) => manager.close()));
    await Promise.all(children.splice(0).map((child) => child.kill()));
    await admin.quit();
    rmSync(dir, { recursive: true, force: true });
  });

  function store(): RedisLockStore {
    return new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix: prefix, ownsClient: true });
  }

  function manager(lockStore = store()): LockManager {
    const created = new LockManager({ store: lockStore });
    managers.push(created);
    return created;
  }

  const names = () => resourceKeys(prefix, KEY);

  async function until(condition: () => Promise<boolean>, timeout = 10_000): Promise<void> {
    const deadline = performance.now() + timeout;
    while (!(await condition())) {
      if (performance.now() > deadline) throw new Error(`condition not met within ${timeout} ms`);
      await sleep(5);
    }
  }

  /** Waits until `count` processes stand in the key's line. */
  const lineOf = (count: number) => until(async () => (await admin.llen(names().line)) === count);

  /** Acquires with the slow retry, noting how many requests it took and when it resolved. */
  function waitFor(locks: LockManager, fencing = false) {
    const attempts: number[] = [];
    locks.on('acquired', (event) => attempts.push(event.attempts));
    const asked = performance.now();
    const lock = locks.acquire(KEY, { wait: 10_000, ttl: 30_000, fencing, retry: SLOW_RETRY }).then((held) => ({
      held,
      at: performance.now(),
    }));
    return { lock, attempts, asked };
  }

  /** Releases `lock`; `waiting` must get the key from that release, long before its own retry. */
  async function servedByRelease(lock: Lock, waiting: ReturnType<typeof waitFor>) {
    const released = performance.now();
    await lock.release();
    const { held, at } = await waiting.lock;
    expect(at - released).toBeLessThan(SLOW_RETRY.minDelay / 2);
    expect(waiting.attempts[0]).toBeLessThanOrEqual(2);
    expect(storedToken(await admin.get(names().lock))).toBe(held.token);
    return { held, released };
  }

  it('grants the waiter directly, its lease dated from its refused request, never from the notice', async () => {
    const holder = manager();
    const first = await holder.acquire(KEY, { ttl: 30_000, fencing: true });
    const waiter = waitFor(manager(), true);
    await lineOf(1);
    await until(async () => (await channelListeners(admin, names().channel)) > 0);
    const { held, released } = await servedByRelease(first, waiter);
    expect(held.fence).toBeGreaterThan(first.fence!);
    // its validity counts from its refused request, sent before the release ran, never from the notice
    expect(held.validUntil).toBeLessThan(released + 30_000);
    expect(held.validUntil).toBeGreaterThanOrEqual(waiter.asked + 30_000 - 400);
    // its place, and the offer in it, are spent
    expect(await admin.exists(names().line)).toBe(0);
    await held.release();
  });

  it('passes over a waiter whose process was SIGKILLed while first in line, in the same release', async () => {
    const holder = manager();
    const first = await holder.acquire(KEY, { ttl: 30_000, label: 'Holder.run' });
    const rival = startChild(rivalProgram, {
      REDIS_URL: testRedisUrl(),
      KEY_PREFIX: prefix,
      KEY,
      INSIDE_KEY: `${prefix}inside`,
      ENTERED_FILE: join(dir, 'entered'),
      TTL: '30000',
    });
    children.push(rival);
    await rival.waitFor('ready', 30_000);
    rival.send('take Holder.run');
    // the rival waits in the line, its request beside its place, listening on its own channel
    await lineOf(1);
    await until(async () => (await admin.lrange(names().line, 0, -1)).some((entry) => entry.includes(' ')));
    await until(async () => (await channelListeners(admin, names().channel)) > 0);
    await rival.kill('SIGKILL');
    await until(async () => (await channelListeners(admin, names().channel)) === 0);

    const next = waitFor(manager());
    await lineOf(2);
    await until(async () => (await channelListeners(admin, names().channel)) > 0);
    const released = performance.now();
    await first.release();
    // the grant to the dead process was undone in the release that made it, which granted the next one
    const rightAfter = storedToken(await admin.get(names().lock));
    const { held, at } = await next.lock;
    expect(rightAfter).toBe(held.token);
    expect(at - released).toBeLessThan(SLOW_RETRY.minDelay / 2);
    expect(next.attempts[0]).toBeLessThanOrEqual(2);
    expect(storedToken(await admin.get(names().lock))).toBe(held.token);
    expect(await admin.get(`${prefix}inside`)).toBeNull();
    await held.release();
  });

  it('gives back at once a grant that comes for a waiter that gave up, and the next in line gets it', async () => {
    const holder = manager();
    const first = await holder.acquire(KEY, { ttl: 30_000 });
    // the waiter's leaving the line is slower than the release: its place and request are still there
    const leaving = store();
    leaving.capabilities.line!.leaveLine = async () => undefined;
    const quitter = manager(leaving);
    await expect(quitter.acquire(KEY, { wait: 200, ttl: 30_000 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    expect(await admin.llen(names().line)).toBe(1);

    const next = waitFor(manager());
    await lineOf(2);
    // the quitter's store hears the grant, finds no waiter for it and releases it, token-checked
    const { held } = await servedByRelease(first, next);
    await held.release();
  });

  it('still finds a grant whose notice was lost, by its next request, within its backoff', async () => {
    const holder = manager();
    const first = await holder.acquire(KEY, { ttl: 30_000, fencing: true });
    const deaf = store();
    // as if the notice never arrived (a subscriber reconnecting at that moment)
    (deaf.capabilities.line as unknown as { grantArrived: () => boolean }).grantArrived = () => false;
    // when it sent each request, to tell a request after a full backoff from one woken early
    const asked: number[] = [];
    const ask = deaf.acquire.bind(deaf);
    deaf.acquire = (request) => {
      asked.push(performance.now());
      return ask(request);
    };
    const locks = manager(deaf);
    const attempts: number[] = [];
    locks.on('acquired', (event) => attempts.push(event.attempts));
    const waiting = locks.acquire(KEY, {
      wait: 10_000,
      ttl: 30_000,
      fencing: true,
      retry: { minDelay: 300, maxDelay: 300 },
    });
    await lineOf(1);
    await until(async () => (await channelListeners(admin, names().channel)) > 0);
    const released = performance.now();
    await first.release();
    // granted to its request at once, unknown to it
    await until(async () => (await admin.get(names().lock)) !== null);
    const grantedTo = storedToken(await admin.get(names().lock));
    const held = await waiting;
    const waited = performance.now() - released;
    // its next request found its own token holding the key and was answered as a grant
    expect(held.token).toBe(grantedTo);
    expect(held.fence).toBeGreaterThan(first.fence!);
    // found by the request after its backoff (told of its turn: maxDelay, 300 ms jittered in its upper half: at
    // least 150), not by one woken early; measured between its own requests, a sleep counting from the last
    // reply, wherever the release fell
    expect(asked.at(-1)! - asked.at(-2)!).toBeGreaterThanOrEqual(149);
    expect(waited).toBeLessThan(SLOW_RETRY.minDelay);
    expect(attempts[0]).toBeGreaterThanOrEqual(2);
    await held.release();
  });
});
