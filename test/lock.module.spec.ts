import { jest } from '@jest/globals';
import { Injectable, Logger, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  LockConfigurationError,
  LockModule,
  LockService,
  LockStoreError,
  MemoryLockStore,
  RedisLockStore,
  RedlockStore,
  type LockModuleOptions,
} from '../lib/index.js';
import { LOCK_MODULE_OPTIONS } from '../lib/lock.module-definition.js';
import { freePort, startRedisServer } from './support/redis-server.js';
import { testRedisUrl, uniquePrefix } from './support/stores.js';

@Injectable()
class LockConfig {
  createLockOptions(): LockModuleOptions {
    return { redis: testRedisUrl(), keyPrefix: uniquePrefix(), ttl: '5s' };
  }
}

@Module({ providers: [LockConfig], exports: [LockConfig] })
class ConfigModule {}

@Injectable()
class Consumer {
  constructor(readonly locks: LockService) {}
}

@Module({ providers: [Consumer], exports: [Consumer] })
class FeatureModule {}

async function boot(imports: unknown[]) {
  const ref = await Test.createTestingModule({ imports: imports as never[] }).compile();
  const app = ref.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('LockModule', () => {
  it.each([
    ['forRoot', LockModule.forRoot({ redis: testRedisUrl(), keyPrefix: uniquePrefix(), isGlobal: true })],
    [
      'forRootAsync with useFactory',
      LockModule.forRootAsync({
        isGlobal: true,
        useFactory: () => ({ redis: testRedisUrl(), keyPrefix: uniquePrefix() }),
      }),
    ],
    ['forRootAsync with useClass', LockModule.forRootAsync({ isGlobal: true, useClass: LockConfig })],
    [
      'forRootAsync with useExisting',
      LockModule.forRootAsync({ isGlobal: true, imports: [ConfigModule], useExisting: LockConfig }),
    ],
  ])('%s with isGlobal provides LockService to a module that does not import it', async (_name, lockModule) => {
    const app = await boot([lockModule, FeatureModule]);
    const { locks } = app.get(Consumer);
    const lock = await locks.acquire('global-check');
    expect(await locks.isLocked('global-check')).toBe(true);
    expect(await lock.release()).toBe(true);
    await app.close();
  });

  it('without isGlobal, a module that does not import LockModule cannot inject LockService', async () => {
    const error = await boot([LockModule.forRoot({}), FeatureModule]).catch((e: unknown) => e);
    expect(String(error)).toMatch(/LockService/);
    const asyncError = await boot([LockModule.forRootAsync({ useFactory: () => ({}) }), FeatureModule]).catch(
      (e: unknown) => e,
    );
    expect(String(asyncError)).toMatch(/LockService/);
  });

  it('uses the memory store when no store option is given at all, and warns once at startup that locks are per process', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      for (const lockModule of [LockModule.forRoot(), LockModule.forRootAsync({ useFactory: () => ({ ttl: '5s' }) })]) {
        const ref = await Test.createTestingModule({ imports: [lockModule] }).compile();
        const app = ref.createNestApplication({ logger: false });
        await app.init();
        expect(app.get(LockService).store).toBeInstanceOf(MemoryLockStore);
        await app.close();
      }
      const notices = warn.mock.calls
        .map(([message]) => String(message))
        .filter((m) => m.includes('this process only'));
      expect(notices).toHaveLength(2);
      expect(notices[0]).toMatch(/other instances of this application .* can hold the same lock at once/);
    } finally {
      warn.mockRestore();
    }
  });

  it('says nothing of the memory store when it is the store the options ask for', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const app = await boot([LockModule.forRoot({ store: new MemoryLockStore() })]);
      await app.close();
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it('never closes a Redis client the user passed in, and closes the one it created from a URL', async () => {
    const userClient = new Redis(testRedisUrl());
    const keyPrefix = uniquePrefix();
    const app = await boot([LockModule.forRoot({ redis: userClient, keyPrefix })]);
    const lock = await app.get(LockService).acquire('mine');
    await app.close();
    expect(userClient.status).toBe('ready');
    // the user's client still answers, and the lease its holder kept is still there to release
    expect(await userClient.exists(`${keyPrefix}{mine}`)).toBe(1);
    expect(await lock.release()).toBe(true);
    expect(await userClient.exists(`${keyPrefix}{mine}`)).toBe(0);
    await userClient.quit();

    const owned = await boot([LockModule.forRoot({ redis: testRedisUrl(), keyPrefix: uniquePrefix() })]);
    const client = (owned.get(LockService).store as RedisLockStore).client as unknown as Redis;
    expect(client.status).toBe('ready');
    const ended = new Promise((resolve) => client.once('end', resolve));
    await owned.close();
    await ended;
    expect(client.status).toBe('end');
  });

  it('never ends a lease its holder has not let go at app.close(): it asks the holder to stop, then closes its client after the release', async () => {
    const keyPrefix = uniquePrefix();
    const app = await boot([LockModule.forRoot({ redis: testRedisUrl(), keyPrefix, drainTimeout: 0 })]);
    const locks = app.get(LockService);
    const client = (locks.store as RedisLockStore).client as unknown as Redis;
    const ended = new Promise((resolve) => client.once('end', resolve));
    const lock = await locks.acquire('held-at-shutdown', { ttl: 60_000 });
    const admin = new Redis(testRedisUrl());
    expect(await admin.exists(`${keyPrefix}{held-at-shutdown}`)).toBe(1);
    await app.close();
    expect(lock.signal.reason).toMatchObject({ code: 'LOCK_LOST', reason: 'shutdown' });
    expect(lock.isHeld).toBe(true);
    expect(await admin.exists(`${keyPrefix}{held-at-shutdown}`)).toBe(1);
    expect(client.status).toBe('ready');
    expect(await lock.release()).toBe(true);
    await ended;
    expect(await admin.exists(`${keyPrefix}{held-at-shutdown}`)).toBe(0);
    await admin.quit();
  });

  it.each<[string, LockModuleOptions, RegExp]>([
    ['a zero ttl', { ttl: 0 }, /"ttl".*got 0/],
    ['a negative wait', { wait: -1 }, /"wait".*got -1/],
    ['a NaN ttl', { ttl: Number.NaN }, /"ttl".*got NaN/],
    ['an unparsable duration', { ttl: '10 parsecs' }, /"ttl".*"10 parsecs"/],
    ['a key prefix with a brace', { keyPrefix: 'app{1}:' }, /"keyPrefix"/],
    ['a bad redis URL', { redis: 'localhost:6379' }, /"redis"/],
    [
      'both store and redis',
      { store: new MemoryLockStore(), redis: 'redis://127.0.0.1:1' },
      /not both "store" and "redis"/,
    ],
    [
      'a Redlock of two nodes',
      { redlock: { nodes: ['redis://127.0.0.1:1', 'redis://127.0.0.1:2'] } },
      /"redlock.nodes".*odd|quorum/,
    ],
    ['a non-boolean autoRenew', { autoRenew: 'yes' as never }, /"autoRenew"/],
    ['a zero maxKeyLength', { maxKeyLength: 0 }, /"maxKeyLength"/],
    ['a retry factor below 1', { retry: { factor: 0.5 } }, /"retry.factor"/],
  ])('refuses %s at bootstrap with a LockConfigurationError naming the option', async (_name, options, message) => {
    const error = await Test.createTestingModule({ imports: [LockModule.forRoot(options)] })
      .compile()
      .then((ref) => ref.get(LockService))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as Error).message).toMatch(message);
  });

  it('fails the bootstrap with LockStoreError, not a hang, when Redis is unreachable at startup', async () => {
    const port = await freePort();
    const started = Date.now();
    const error = await boot([
      LockModule.forRoot({ redis: { port, host: '127.0.0.1', connectTimeout: 300, commandTimeout: 500 } }),
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('builds a Redlock store from `redlock: { nodes }` and locks through a quorum of three servers', async () => {
    const servers = await Promise.all([startRedisServer(), startRedisServer(), startRedisServer()]);
    try {
      const app = await boot([
        LockModule.forRoot({ redlock: { nodes: servers.map((s) => s.url) }, keyPrefix: uniquePrefix() }),
      ]);
      const locks = app.get(LockService);
      expect(locks.store).toBeInstanceOf(RedlockStore);
      await locks.using('quorum', async () => {
        expect(await locks.tryAcquire('quorum')).toBeNull();
      });
      expect(await locks.isLocked('quorum')).toBe(false);
      await app.close();
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  });

  it('exposes the options under LOCK_MODULE_OPTIONS for other providers', async () => {
    const ref = await Test.createTestingModule({ imports: [LockModule.forRoot({ ttl: '7s' })] }).compile();
    expect(ref.get(LOCK_MODULE_OPTIONS)).toMatchObject({ ttl: '7s' });
  });
});

describe('LockService', () => {
  let service: LockService;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const app = await boot([LockModule.forRoot({ redis: testRedisUrl(), keyPrefix: uniquePrefix() })]);
    service = app.get(LockService);
    close = () => app.close();
  });

  afterAll(() => close());

  it('tryAcquire returns null while another holds the key, and the lock once it is free', async () => {
    const lock = await service.acquire('try');
    expect(await service.tryAcquire('try')).toBeNull();
    await lock.release();
    const next = await service.tryAcquire('try');
    expect(next?.key).toBe('try');
    await next?.release();
  });

  it('using() hands fn the lock with its signal and fence, renews it, and releases it even when fn throws', async () => {
    let seen: { fence?: number; aborted: boolean; current?: string } | undefined;
    await expect(
      service.using(
        'scoped',
        async (lock) => {
          seen = { fence: lock.fence, aborted: lock.signal.aborted, current: service.current()?.key };
          throw new Error('boom');
        },
        { fencing: true },
      ),
    ).rejects.toThrow('boom');
    expect(seen).toEqual({ fence: expect.any(Number), aborted: false, current: 'scoped' });
    expect(await service.isLocked('scoped')).toBe(false);
  });

  it('using() with several keys takes them all, and two opposite orders never deadlock', async () => {
    const order: string[] = [];
    await Promise.all([
      service.using(['acct:a', 'acct:b'], async () => void order.push('ab'), { wait: '5s' }),
      service.using(['acct:b', 'acct:a'], async () => void order.push('ba'), { wait: '5s' }),
    ]);
    expect(order.sort()).toEqual(['ab', 'ba']);
  });

  it('a nested using() of a key the flow already holds goes straight through instead of waiting on itself', async () => {
    const result = await service.using('outer', () => service.using('outer', () => 'inner ran', { wait: 0 }), {
      wait: 0,
    });
    expect(result).toBe('inner ran');
  });

  it('inspect shows whether a key is held, its remaining lease, fence and holder, never the token', async () => {
    const lock = await service.acquire('inspected', { fencing: true, ttl: 10_000 });
    const state = await service.inspect('inspected');
    expect(state).toEqual({
      held: true,
      remainingTtl: expect.any(Number),
      fence: lock.fence,
      holder: { host: expect.any(String), pid: process.pid, acquiredAt: expect.any(Date) },
    });
    expect(JSON.stringify(state)).not.toContain(lock.token);
    await lock.release();
  });
});
