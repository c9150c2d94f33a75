import { Controller, Module, Param, Post, UnprocessableEntityException, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import {
  LockLostError,
  LockManager,
  LockModule,
  LockService,
  RedisLockStore,
  WithLock,
  type LockLogger,
} from '../../lib/index.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import type { Platform } from '../support/nest-app/create-app.js';

/** A promise and the function that settles it. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** Where the test and the handler of one request meet: it entered its section; it may go on. */
let gate = { entered: deferred(), proceed: deferred() };

@Controller('docs')
class DocsController {
  constructor(private readonly locks: LockService) {}

  @Post(':id/save')
  @WithLock('doc:<id>', { onLost: 'throw' })
  save(@Param('id') id: string): Promise<{ saved: string }> {
    return this.work(id);
  }

  @Post(':id/save-anyway')
  @WithLock('doc:<id>')
  saveAnyway(@Param('id') id: string): Promise<{ saved: string }> {
    return this.work(id);
  }

  @Post(':id/save-unrenewed')
  @WithLock('doc:<id>', { onLost: 'throw', autoRenew: false, ttl: 300 })
  async saveUnrenewed(@Param('id') id: string): Promise<{ saved: string }> {
    const { signal } = this.locks.current()!;
    // past its lease's end, yet returning as if nothing happened
    if (!signal.aborted) await once(signal, 'abort');
    return { saved: id };
  }

  @Post(':id/refuse')
  @WithLock('doc:<id>', { onLost: 'throw' })
  async refuse(@Param('id') id: string): Promise<never> {
    await this.work(id);
    throw new UnprocessableEntityException('the document is read-only');
  }

  private async work(id: string): Promise<{ saved: string }> {
    gate.entered.resolve();
    await gate.proceed.promise;
    return { saved: id };
  }
}

/** A logger that keeps its warnings. */
function warningLogger(): LockLogger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, warn: (message) => void warnings.push(message), error: () => undefined };
}

describe.each<Platform>(['express', 'fastify'])(
  'a @WithLock handler whose lease was lost while it ran (%s)',
  (platform) => {
    let app: INestApplication;
    let url: string;
    let admin: Redis;
    let keyPrefix: string;
    let logger: ReturnType<typeof warningLogger>;

    beforeEach(async () => {
      gate = { entered: deferred(), proceed: deferred() };
      keyPrefix = uniquePrefix();
      logger = warningLogger();
      admin = new Redis(testRedisUrl());

      @Module({
        imports: [LockModule.forRoot({ redis: testRedisUrl(), keyPrefix, logger })],
        controllers: [DocsController],
      })
      class DocsModule {}

      const adapter = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter();
      app = await NestFactory.create(DocsModule, adapter, { logger: false, abortOnError: false });
      await app.listen(0, '127.0.0.1');
      url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    });

    afterEach(async () => {
      gate.proceed.resolve();
      await app.close();
      await admin.quit();
    });

    /** Sends `path`, takes the lease away from its handler (as an expiry or an operator would), lets it return. */
    async function takenWhileRunning(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
      const response = fetch(`${url}/docs/7/${path}`, { method: 'POST' });
      await gate.entered.promise;
      expect(await admin.del(resourceKeys(keyPrefix, 'doc:7').lock)).toBe(1);
      gate.proceed.resolve();
      const answer = await response;
      return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
    }

    it('answers 503 LOCK_LOST instead of 201 with onLost: throw, and logs the loss by template and reason', async () => {
      const { status, body } = await takenWhileRunning('save');

      expect(status).toBe(503);
      expect(body).toMatchObject({ statusCode: 503, code: 'LOCK_LOST', resource: 'doc:<id>' });
      expect(logger.warnings).toEqual([
        expect.stringMatching(
          /^Lock "doc:<id>" was lost: the store no longer holds this lease .*\[by DocsController\.save\]\.$/,
        ),
      ]);
    });

    it('still answers 201 without onLost, and logs the loss at WARN by template and reason', async () => {
      const { status, body } = await takenWhileRunning('save-anyway');

      expect(status).toBe(201);
      expect(body).toEqual({ saved: '7' });
      expect(logger.warnings).toEqual([
        expect.stringMatching(
          /^Lock "doc:<id>" was lost: the store no longer holds this lease .*\[by DocsController\.saveAnyway\]\.$/,
        ),
      ]);
    });

    it('answers 503 LOCK_LOST when a lease that is not renewed runs out before the handler returns', async () => {
      const response = await fetch(`${url}/docs/7/save-unrenewed`, { method: 'POST' });

      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ code: 'LOCK_LOST', resource: 'doc:<id>' });
      expect(logger.warnings).toEqual([expect.stringMatching(/was lost: its lease expired before it was renewed/)]);
    });

    it("passes the handler's own exception through untouched, lease lost or not", async () => {
      const { status, body } = await takenWhileRunning('refuse');

      expect(status).toBe(422);
      expect(body).toMatchObject({ statusCode: 422, message: 'the document is read-only' });
    });
  },
);

describe('LockManager.using() with onLost', () => {
  let admin: Redis;
  let locks: LockManager;
  let keyPrefix: string;

  beforeEach(() => {
    admin = new Redis(testRedisUrl());
    keyPrefix = uniquePrefix();
    const store = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true });
    locks = new LockManager({ store, onLost: 'throw' });
  });

  afterEach(async () => {
    await locks.close();
    await admin.quit();
  });

  const takeAway = (key: string) => admin.del(resourceKeys(keyPrefix, key).lock);

  it("rejects with the loss as the manager's default says, and returns the result when a call says 'return'", async () => {
    const failed = locks.using('k', async () => (await takeAway('k'), 'written'));
    await expect(failed).rejects.toBeInstanceOf(LockLostError);
    await expect(failed).rejects.toMatchObject({ code: 'LOCK_LOST', reason: 'taken' });

    const returned = locks.using('k', async () => (await takeAway('k'), 'written'), { onLost: 'return' });
    await expect(returned).resolves.toBe('written');
  });

  it('fails a scope of several keys when any one of its leases was lost', async () => {
    const call = locks.using(['a', 'b'], async () => (await takeAway('b'), 'written'));
    await expect(call).rejects.toMatchObject({ code: 'LOCK_LOST', key: 'b' });
  });
});
