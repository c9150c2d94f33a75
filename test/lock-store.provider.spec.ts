import { jest } from '@jest/globals';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { LOCK_STORE, LockModule, LockService, MemoryLockStore, RedisLockStore } from '../lib/index.js';
import { freePort } from './support/redis-server.js';
import { testRedisUrl, uniquePrefix } from './support/stores.js';

@Injectable()
class Stock {
  constructor(readonly locks: LockService) {}
}

@Module({ imports: [LockModule.forRoot({ redis: testRedisUrl(), keyPrefix: uniquePrefix() })], providers: [Stock] })
class StockModule {}

describe('LOCK_STORE', () => {
  it('is the store behind LockService, and other providers can inject it', async () => {
    const ref = await Test.createTestingModule({ imports: [StockModule] }).compile();
    const app = await ref.createNestApplication({ logger: false }).init();
    try {
      const store = app.get(LOCK_STORE);
      expect(store).toBeInstanceOf(RedisLockStore);
      const lock = await app.get(Stock).locks.acquire('sku:1');
      expect((await store.inspect(lock.key)).held).toBe(true);
      await lock.release();
    } finally {
      await app.close();
    }
  });

  it('can be overridden in a test: nothing connects to the configured Redis, and the override is not closed', async () => {
    // the configured server does not exist: a connection attempt would fail verify() at init
    @Module({
      imports: [LockModule.forRoot({ redis: `redis://127.0.0.1:${await freePort()}`, drainTimeout: 0 })],
      providers: [Stock],
    })
    class UnreachableModule {}
    const memory = new MemoryLockStore();
    const close = jest.spyOn(memory, 'close');
    const ref = await Test.createTestingModule({ imports: [UnreachableModule] })
      .overrideProvider(LOCK_STORE)
      .useValue(memory)
      .compile();
    const app = await ref.createNestApplication({ logger: false }).init();
    const locks = app.get(Stock).locks;
    const lock = await locks.acquire('sku:1');
    expect((await memory.inspect('sku:1')).held).toBe(true);
    expect(await locks.tryAcquire('sku:1')).toBeNull();
    await app.close();
    // the module kept the lease its holder had not let go, and left the store it was given open, also after
    expect((await memory.inspect('sku:1')).held).toBe(true);
    await lock.release();
    expect((await memory.inspect('sku:1')).held).toBe(false);
    expect(close).not.toHaveBeenCalled();
    await memory.close();
  });

  it('a store built by the module is closed by it', async () => {
    const ref = await Test.createTestingModule({ imports: [StockModule] }).compile();
    const app = await ref.createNestApplication({ logger: false }).init();
    const store = app.get<RedisLockStore>(LOCK_STORE);
    await app.close();
    await expect(store.inspect('sku:1')).rejects.toThrow();
  });
});
