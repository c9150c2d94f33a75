import { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { LockLostError } from '../../lib/errors/lock-lost.error.js';
import { LockStoreError } from '../../lib/errors/lock-store.error.js';
import { LockManager, STOP_GRACE } from '../../lib/core/lock-manager.js';
import type { Lock } from '../../lib/core/lock.js';
import type { LockLogger, LockSectionOptions } from '../../lib/interfaces/lock-options.interface.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import { channelListeners } from '../support/channel-listeners.js';
import { storedToken } from '../support/stored-token.js';

/** A logger that keeps its warnings. */
function warningLogger(): LockLogger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, warn: (message) => void warnings.push(message), error: () => undefined };
}

/** The clients of the managers of the current test, disconnected after it should a test leave one open. */
const clients: Redis[] = [];

afterEach(() => {
  for (const client of clients.splice(0)) if (client.status !== 'end') client.disconnect();
});

/** A manager on its own Redis store and client (which it closes), and views of what is left of it in Redis. */
function managerWith(drainTimeout: number) {
  const keyPrefix = uniquePrefix();
  const client = new Redis(testRedisUrl());
  clients.push(client);
  const logger = warningLogger();
  const store = new RedisLockStore({ client, keyPrefix, ownsClient: true });
  return {
    manager: new LockManager({ store, drainTimeout, logger }),
    prefix: keyPrefix,
    client,
    logger,
    /** Resolves when the store's client has been closed. */
    storeClosed: new Promise<void>((resolve) => client.once('end', resolve)),
    async keysLeft(): Promise<string[]> {
      const admin = new Redis(testRedisUrl());
      try {
        return await admin.keys(`${keyPrefix}*`);
      } finally {
        await admin.quit();
      }
    },
  };
}

/** Resolves once some client subscribes to `channel`. */
async function subscribed(channel: string): Promise<void> {
  const admin = new Redis(testRedisUrl());
  try {
    for (;;) {
      const count = await channelListeners(admin, channel);
      if (Number(count) > 0) return;
    }
  } finally {
    await admin.quit();
  }
}

/** A section that runs until `finish()`: its lock once it started, and the call's result. */
function section(manager: LockManager, key: string, options: LockSectionOptions) {
  let finish!: (value: string) => void;
  const finished = new Promise<string>((resolve) => (finish = resolve));
  let started!: (lock: Lock) => void;
  const lock = new Promise<Lock>((resolve) => (started = resolve));
  const result = manager.using(
    key,
    (held) => {
      started(held);
      return finished;
    },
    options,
  );
  return { lock, result, finish };
}

/** Resolves at the first renewal after which `lock` has been held longer than `ms`. */
function renewedFor(manager: LockManager, lock: Lock, since: number, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const off = manager.on('renewed', (event) => {
      if (event.lock !== lock || performance.now() - since <= ms) return;
      off();
      resolve();
    });
  });
}

describe('LockManager.close() drains', () => {
  it('hands nothing over to a local waiter: the waiter is refused, and the holder keeps its lease until it lets go', async () => {
    const { manager, keysLeft, prefix, storeClosed } = managerWith(0);
    const holder = await manager.acquire('k', { ttl: '30s' });
    const waiter = manager.acquire('k', { wait: '10s', ttl: '30s' });
    // the waiter stands by for a hand-over once it listens for the key's release notices
    await subscribed(`${prefix}{k}:released`);

    await manager.close();

    await expect(waiter).rejects.toBeInstanceOf(LockStoreError);
    await expect(waiter).rejects.toThrow('the lock service is shutting down');
    expect(holder.signal.reason).toMatchObject({ code: 'LOCK_LOST', reason: 'shutdown' });
    expect(holder.isHeld).toBe(true);
    expect(await keysLeft()).toEqual([`${prefix}{k}`]);
    expect(await holder.release()).toBe(true);
    await storeClosed;
    expect(await keysLeft()).toEqual([]);
  });

  it('lets a holder that releases within the drain finish with its lease, and refuses new acquisitions meanwhile', async () => {
    const { manager, keysLeft } = managerWith(5000);
    const holder = await manager.acquire('k', { ttl: '30s' });

    const closing = manager.close();
    await expect(manager.acquire('other')).rejects.toThrow('the lock service is shutting down');
    expect(holder.isHeld).toBe(true);
    await holder.release();
    await closing;

    expect(holder.signal.aborted).toBe(false);
    expect(await keysLeft()).toEqual([]);
  });

  it('keeps the lease of a section that outlives the drain, renewed past its ttl, and closes the store after it', async () => {
    const { manager, client, logger, prefix, storeClosed } = managerWith(200);
    const admin = new Redis(testRedisUrl());
    try {
      // long enough that a renewal late by a busy machine's stall still finds its lease
      const ttl = 1500;
      const running = section(manager, 'doc:42', { ttl, metricKey: 'doc:<id>', onLost: 'throw' });
      const lock = await running.lock;
      const since = performance.now();

      await manager.close();

      expect(performance.now() - since).toBeGreaterThanOrEqual(190);
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect(lock.signal.reason).toMatchObject({ reason: 'shutdown', keyTemplate: 'doc:<id>' });
      expect((lock.signal.reason as Error).message).toContain('kept until the section ends or the process exits');
      await renewedFor(manager, lock, since, 1.5 * ttl);
      expect(lock.isHeld).toBe(true);
      const lockKey = resourceKeys(prefix, 'doc:42').lock;
      expect(storedToken(await admin.get(lockKey))).toBe(lock.token);
      expect(await admin.pttl(lockKey)).toBeGreaterThan(0);
      expect(client.status).toBe('ready');

      // the shutdown's request to stop is no loss: the section's result stands, even with onLost: 'throw'
      running.finish('done');
      await expect(running.result).resolves.toBe('done');
      await storeClosed;
      expect(await admin.exists(lockKey)).toBe(0);
      expect(logger.warnings).toEqual([
        expect.stringMatching(/^Lock "doc:<id>": the shutdown's drain of 200 ms ended while its lease was held/),
        expect.stringMatching(/^Lock "doc:<id>": released \d+ ms past the shutdown's drain \(held for \d+ ms\)\.$/),
      ]);
      for (const warning of logger.warnings) expect(warning).not.toContain('doc:42');
    } finally {
      await admin.quit();
    }
  });

  it('keeps the permits of sections that outlive the drain (a semaphore, a read lock) until each ends', async () => {
    const { manager, client, storeClosed, keysLeft } = managerWith(100);
    const ttl = 1500;
    const semaphore = section(manager, 'pool', { ttl, limit: 2 });
    const reader = section(manager, 'doc', { ttl, mode: 'read' });
    const [permit, readPermit] = await Promise.all([semaphore.lock, reader.lock]);
    const since = performance.now();

    await manager.close();

    for (const held of [permit, readPermit]) {
      expect(held.signal.reason).toMatchObject({ code: 'LOCK_LOST', reason: 'shutdown' });
      expect(held.isHeld).toBe(true);
    }
    await Promise.all([
      renewedFor(manager, permit, since, 1.5 * ttl),
      renewedFor(manager, readPermit, since, 1.5 * ttl),
    ]);
    expect(await manager.inspect('pool')).toMatchObject({ held: true, holders: 1, limit: 2 });
    expect(await manager.inspect('doc')).toMatchObject({ held: true, holders: 1, mode: 'read' });

    semaphore.finish('pooled');
    await expect(semaphore.result).resolves.toBe('pooled');
    expect(await manager.inspect('pool')).toMatchObject({ held: false });
    expect(readPermit.isHeld).toBe(true);
    expect(client.status).toBe('ready');

    reader.finish('read');
    await expect(reader.result).resolves.toBe('read');
    await storeClosed;
    expect(await keysLeft()).toEqual([]);
  });

  it('never deletes a lease from acquire() that outlives the drain: unrenewed, it runs out, and then the store closes', async () => {
    const { manager, logger, storeClosed } = managerWith(0);
    // it outlasts the drain and the second its holder gets to stop (STOP_GRACE)
    const holder = await manager.acquire('k', { ttl: STOP_GRACE + 1500 });
    const lost = new Promise((resolve) => manager.on('lost', resolve));

    await manager.close();

    expect(holder.isHeld).toBe(true);
    expect(await lost).toMatchObject({ reason: 'expired', pastDrain: expect.any(Number) });
    expect(holder.isHeld).toBe(false);
    await storeClosed;
    expect(logger.warnings).toEqual([
      expect.stringMatching(/^The lock: the shutdown's drain of 0 ms ended/),
      expect.stringMatching(/^The lock was lost: its lease expired .* \d+ ms past the shutdown's drain\.$/),
    ]);
  }, 20_000);
});
