import { Controller, Injectable, Module, Post, Scope } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  Idempotent,
  IdempotencyKeyReusedError,
  LockConfigurationError,
  LockManager,
  LockModule,
  LockNotAcquiredError,
  MemoryLockStore,
} from '../../lib/index.js';
import { Redis } from 'ioredis';
import type { LockStore } from '../../lib/store.js';
import { createApp } from '../support/nest-app/create-app.js';
import { redisKind, redlock3Kind, redlockServers, testRedisUrl, type StorePair } from '../support/stores.js';

afterAll(() => redlockServers.stop());

describe('LockService.idempotent()', () => {
  let pair: StorePair;
  let first: LockManager;
  let second: LockManager;

  beforeEach(async () => {
    pair = await redisKind.create();
    first = new LockManager({ store: pair.store, ttl: 2000, closeStore: false });
    second = new LockManager({ store: pair.other, ttl: 2000, closeStore: false });
  });

  afterEach(async () => {
    await Promise.all([first.close(), second.close()]);
    await pair.close();
  });

  it('runs the operation once per key and answers later calls, in another process, with its result', async () => {
    const key = `payment:${randomUUID()}`;
    let runs = 0;
    const capture = async () => ({ capture: ++runs, at: new Date(0) });
    const answer = await first.idempotent(key, capture);
    expect(answer).toEqual({ capture: 1, at: new Date(0) });
    // kept as JSON: a Date comes back as its string
    expect(await second.idempotent(key, capture)).toEqual({ capture: 1, at: new Date(0).toISOString() });
    expect(runs).toBe(1);
  });

  it('keeps nothing when the operation throws: the retry runs, and the error is the operation’s own', async () => {
    const key = randomUUID();
    const failure = new Error('card declined');
    await expect(first.idempotent(key, () => Promise.reject(failure))).rejects.toBe(failure);
    expect(await second.idempotent(key, () => 'captured')).toBe('captured');
    expect(await first.idempotent(key, () => 'again')).toBe('captured');
  });

  it('refuses a duplicate while the first runs, and lets one that waits get the first result', async () => {
    const key = randomUUID();
    let finish!: (value: string) => void;
    let started!: () => void;
    const runs = new Promise<void>((resolve) => (started = resolve));
    // the duplicate comes once the first runs (a fixed pause let it come first on a busy machine, and run)
    const running = first.idempotent(key, () => {
      started();
      return new Promise<string>((resolve) => (finish = resolve));
    });
    await runs;
    await expect(second.idempotent(key, () => 'twice')).rejects.toBeInstanceOf(LockNotAcquiredError);
    const waiting = second.idempotent(key, () => 'twice', { wait: '5s' });
    finish('once');
    expect(await running).toBe('once');
    expect(await waiting).toBe('once');
  });

  it('refuses the key for another fingerprint, and keeps scopes apart', async () => {
    const key = randomUUID();
    await first.idempotent(key, () => 1, { fingerprint: 'order 1', scope: 'tenant-a' });
    await expect(second.idempotent(key, () => 2, { fingerprint: 'order 2', scope: 'tenant-a' })).rejects.toBeInstanceOf(
      IdempotencyKeyReusedError,
    );
    expect(await second.idempotent(key, () => 2, { fingerprint: 'order 2', scope: 'tenant-b' })).toBe(2);
  });

  it('stores neither key, scope nor fingerprint in clear: not in key names, not in values', async () => {
    const secret = randomUUID();
    await first.idempotent(`key-${secret}`, () => 'done', { scope: `user-${secret}`, fingerprint: `card-${secret}` });
    const admin = new Redis(testRedisUrl());
    try {
      expect(await admin.keys(`*${secret}*`)).toEqual([]);
      const records = await admin.keys('*record:*');
      expect(records.length).toBeGreaterThan(0);
      for (const name of records) expect(await admin.get(name)).not.toContain(secret);
    } finally {
      await admin.quit();
    }
  });

  it('refuses a result bigger than maxBodyBytes at the first call, saying so', async () => {
    const key = randomUUID();
    await expect(first.idempotent(key, () => 'x'.repeat(200), { maxBodyBytes: 100 })).rejects.toThrow(
      /maxBodyBytes.*raise maxBodyBytes or return less/,
    );
  });

  it('refuses unknown option names with the closest known one, and options of @Idempotent() with advice', async () => {
    await expect(first.idempotent('k', () => 1, { ttll: '1h' } as never)).rejects.toThrow(/did you mean "ttl"/);
    await expect(first.idempotent('k', () => 1, { header: 'X-Key' } as never)).rejects.toThrow(/@Idempotent/);
    await expect(first.idempotent('', () => 1)).rejects.toBeInstanceOf(LockConfigurationError);
    // a caller's values (a user id as the scope, a numeric key) are refused by their type, never shown
    await expect(first.idempotent('k', () => 1, { scope: 918_273 as never })).rejects.toThrow(
      'Invalid nestjs-lock option "idempotent().scope": got a number (not shown); expected a string.',
    );
    await expect(first.idempotent(918_273 as never, () => 1)).rejects.toThrow(/got a number \(not shown\)/);
  });

  it('names the store and why when it keeps no records', async () => {
    const redlock = await redlock3Kind.create();
    const manager = new LockManager({ store: redlock.store, closeStore: false, verifyOnFirstUse: false });
    try {
      await expect(manager.idempotent('k', () => 1)).rejects.toThrow(
        /RedlockStore cannot keep the responses of idempotent requests: a response kept on independent nodes/,
      );
    } finally {
      await manager.close();
      await redlock.close();
    }
  });
});

describe('@Idempotent() at bootstrap', () => {
  async function boot(store: LockStore, controller: object, providers: object[] = []): Promise<unknown> {
    @Module({
      imports: [LockModule.forRoot({ store, verifyOnStartup: false })],
      controllers: [controller as never],
      providers: providers as never[],
    })
    class AppModule {}
    const app = await createApp('express', AppModule);
    try {
      await app.init();
      return undefined;
    } catch (error) {
      return error;
    } finally {
      await app.close();
    }
  }

  it('refuses a store without records, naming it and why', async () => {
    @Controller('orders')
    class OrdersController {
      @Post()
      @Idempotent()
      create(): string {
        return 'created';
      }
    }
    const redlock = await redlock3Kind.create();
    try {
      const error = await boot(redlock.store, OrdersController);
      expect(error).toBeInstanceOf(LockConfigurationError);
      expect(String(error)).toMatch(/@Idempotent\(OrdersController.create\).*RedlockStore cannot keep the responses/);
    } finally {
      await redlock.close();
    }
  });

  it('refuses it on a method that is no HTTP route, and a scope the request cannot fill', async () => {
    @Controller('orders')
    class NoRouteController {
      @Idempotent()
      create(): string {
        return 'created';
      }
    }
    expect(String(await boot(new MemoryLockStore(), NoRouteController))).toMatch(
      /expected it on an HTTP route handler/,
    );

    // a provider's method would run on every call unguarded
    @Controller('orders')
    class OrdersController {}
    @Injectable()
    class Payments {
      @Idempotent()
      charge(): Promise<string> {
        return Promise.resolve('charged');
      }
    }
    @Injectable({ scope: Scope.REQUEST })
    class RequestPayments {
      @Idempotent()
      refund(): Promise<string> {
        return Promise.resolve('refunded');
      }
    }
    expect(String(await boot(new MemoryLockStore(), OrdersController, [Payments]))).toMatch(
      /@Idempotent\(Payments.charge\).*expected it on an HTTP route handler/,
    );
    expect(String(await boot(new MemoryLockStore(), OrdersController, [RequestPayments]))).toMatch(
      /@Idempotent\(RequestPayments.refund\).*expected it on an HTTP route handler/,
    );

    @Controller('orders')
    class ScopedController {
      @Post()
      @Idempotent({ scope: '<tenant>' })
      create(): string {
        return 'created';
      }
    }
    expect(String(await boot(new MemoryLockStore(), ScopedController))).toMatch(
      /@Idempotent\(ScopedController.create\).scope/,
    );
  });

  it('refuses unknown option names at decoration, with the closest known one', () => {
    expect(() => Idempotent({ requird: true } as never)).not.toThrow();
    expect(() => {
      class Orders {
        @Idempotent({ requird: true } as never)
        create(): void {}
      }
      return Orders;
    }).toThrow(/@Idempotent\(Orders.create\).requird.*did you mean "required"/);
  });
});
