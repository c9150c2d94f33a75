import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  LockConfigurationError,
  LockManager,
  LockModule,
  LockService,
  LockStoreError,
  RedisLockStore,
  RedlockStore,
  type LockManagerOptions,
} from '../../lib/index.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import { ownRedisServer } from '../support/own-redis-server.js';

const MAXMEMORY = 8 * 1024 * 1024;

const own = ownRedisServer(async (client) => {
  await client.config('SET', 'maxmemory', '0');
  await client.config('SET', 'maxmemory-policy', 'noeviction');
  await client.config('RESETSTAT');
});
const { cleanups } = own;

/** A manager built by hand, as docs/options.md shows it without Nest, over a client of its own; closed after the test. */
function handBuilt(options: Partial<LockManagerOptions> = {}, url = own.server.url): LockManager {
  const store = new RedisLockStore({ client: new Redis(url, { maxRetriesPerRequest: 1 }), ownsClient: true });
  const manager = new LockManager({ store, ...options });
  cleanups.push(() => manager.close());
  return manager;
}

/** How many times the server was asked for its eviction settings (`CONFIG GET maxmemory*`): once per check. */
async function evictionChecks(): Promise<number> {
  const stats = await own.admin.info('commandstats');
  return Number(/^cmdstat_config\|get:calls=(\d+)/m.exec(stats)?.[1] ?? 0);
}

async function evictLeases(): Promise<void> {
  await own.admin.config('SET', 'maxmemory', String(MAXMEMORY));
  await own.admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
}

/** What `operation` rejected with; fails when it resolved. */
async function rejection(operation: Promise<unknown>): Promise<unknown> {
  return operation.then(
    (value) => {
      throw new Error(`expected a rejection, got ${(value as object | undefined)?.constructor.name ?? String(value)}`);
    },
    (error: unknown) => error,
  );
}

describe('a LockManager built by hand, before its first grant', () => {
  it('refuses every acquisition on a Redis with allkeys-lru, checking it once for the calls that came together', async () => {
    await evictLeases();
    const manager = handBuilt();
    const errors = await Promise.all([
      rejection(manager.acquire('stock')),
      rejection(manager.tryAcquire('stock')),
      rejection(manager.using('stock', () => 'ran')),
      rejection(manager.acquire('orders', { limit: 2 })),
    ]);
    for (const error of errors) {
      expect(error).toBeInstanceOf(LockConfigurationError);
      expect((error as Error).message).toContain(`127.0.0.1:${own.server.port} has maxmemory ${MAXMEMORY} bytes`);
      expect((error as Error).message).toContain('maxmemory-policy allkeys-lru');
    }
    expect(new Set(errors).size).toBe(1);
    // refused without asking the server again, and nothing was ever written
    expect(await rejection(manager.acquire('stock'))).toBe(errors[0]);
    expect(await evictionChecks()).toBe(1);
    expect(await own.admin.dbsize()).toBe(0);
  });

  it('grants once verify() passes after the server was fixed', async () => {
    await evictLeases();
    const manager = handBuilt();
    expect(await rejection(manager.acquire('stock'))).toBeInstanceOf(LockConfigurationError);
    await own.admin.config('SET', 'maxmemory-policy', 'noeviction');
    expect(await manager.verify()).toEqual([]);
    expect(await manager.using('stock', () => 'ran')).toBe('ran');
  });

  it('refuses Redlock nodes 127.0.0.1, localhost and 127.1 that are one server, naming them', async () => {
    const nodes = ['127.0.0.1', 'localhost', '127.1'].map((host) => `redis://${host}:${own.server.port}`);
    const manager = new LockManager({ store: new RedlockStore({ nodes }) });
    cleanups.push(() => manager.close());
    const error = await rejection(manager.acquire('stock'));
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as Error).message).toContain('nodes[0], nodes[1] and nodes[2] are one server');
    expect(await own.admin.dbsize()).toBe(0);
  });

  it('checks again at the next acquisition when the store did not answer the first check', async () => {
    const proxy = await startFaultProxy(own.server.url);
    cleanups.push(() => proxy.close());
    await proxy.refuse(true);
    const manager = handBuilt({}, proxy.url);
    expect(await rejection(manager.acquire('stock'))).toBeInstanceOf(LockStoreError);
    await proxy.refuse(false);
    const lock = await manager.acquire('stock');
    expect(await lock.release()).toBe(true);
    expect(await evictionChecks()).toBe(1);
  });

  it('does not check again at its first grant after verify() passed at startup', async () => {
    const manager = handBuilt();
    await manager.verify();
    for (let round = 0; round < 3; round++) await manager.using('stock', () => undefined);
    expect(await evictionChecks()).toBe(1);
  });

  it('grants unchecked with verifyOnFirstUse: false, for whoever checks the store otherwise', async () => {
    await evictLeases();
    const manager = handBuilt({ verifyOnFirstUse: false });
    expect(await manager.using('stock', () => 'ran')).toBe('ran');
    expect(await evictionChecks()).toBe(0);
  });
});

describe('LockService', () => {
  it('checks the store once, at bootstrap, not again at its first grant', async () => {
    const ref = await Test.createTestingModule({ imports: [LockModule.forRoot({ redis: own.server.url })] }).compile();
    const app = await ref.createNestApplication({ logger: false }).init();
    try {
      expect(await app.get(LockService).using('stock', () => 'ran')).toBe('ran');
      expect(await evictionChecks()).toBe(1);
    } finally {
      await app.close();
    }
  });
});
