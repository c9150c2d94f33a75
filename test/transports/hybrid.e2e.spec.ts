import { Redis } from 'ioredis';
import type { NestHybridApplicationOptions } from '@nestjs/common';
import { LockService } from '../../lib/index.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { startNatsServer, type NatsServerHandle } from '../support/nats-server.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { uniquePrefix } from '../support/stores.js';
import { startHybrid, type RunningHybrid } from './fixtures/hybrid-app.js';
import type { MicroserviceTransport } from './fixtures/microservice-app.js';

/** An account number as a key part: server data no log line or client may read unless the application opts in. */
const ACCOUNT = 'SECRET-ACCOUNT-4242';
const TEMPLATE = 'acct:<accountId>';

const setups: Array<[kind: 'tcp' | 'nats', label: string, hybrid: NestHybridApplicationOptions | undefined]> = [
  ['tcp', "Nest's default options", undefined],
  ['tcp', 'inheritAppConfig', { inheritAppConfig: true }],
  ['nats', "Nest's default options", undefined],
  ['nats', 'inheritAppConfig', { inheritAppConfig: true }],
];

describe.each(setups)('@WithLock on a %s microservice connected to an HTTP app with %s', (kind, _label, hybrid) => {
  let nats: NatsServerHandle | undefined;
  let redis: RedisServerHandle;
  let admin: Redis;
  let keyPrefix: string;
  let running: RunningHybrid;

  beforeAll(async () => {
    if (kind === 'nats') nats = await startNatsServer();
  });

  afterAll(async () => {
    await nats?.stop();
  });

  beforeEach(async () => {
    redis = await startRedisServer();
    admin = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    keyPrefix = uniquePrefix();
    const transport: MicroserviceTransport = nats ? { kind: 'nats', url: nats.url } : { kind: 'tcp' };
    running = await startHybrid(transport, { redis: redis.url, keyPrefix }, hybrid);
  });

  afterEach(async () => {
    await running.close();
    admin.disconnect();
    await redis.stop();
  });

  /** What the client's `send` settled with: the error it rejected with, or 'replied'. */
  const outcome = (pattern: string, data: unknown): Promise<unknown> =>
    running.send(pattern, data).then(
      () => 'replied',
      (error: unknown) => error,
    );

  /** Everything the server logged, at every level, as a console would print it. */
  const output = (): string => running.logger.printed.join('\n');

  it('fails the second of two concurrent messages on one account with the LOCKED payload, and logs no error', async () => {
    const first = running.send('debit', { accountId: ACCOUNT });
    await running.gate.reached(1);
    const second = await outcome('debit', { accountId: ACCOUNT });
    running.gate.open();

    expect(second).toEqual({
      code: 'LOCKED',
      message: `Resource "${TEMPLATE}" is locked by another operation; retry later.`,
      resource: TEMPLATE,
      retryAfter: expect.any(Number),
    });
    expect((second as { retryAfter: number }).retryAfter).toBeGreaterThanOrEqual(1);
    expect(await first).toEqual({ debited: ACCOUNT });
    expect(running.gate.entered).toBe(1);
    expect(running.logger.errors()).toEqual([]);
    expect(output()).not.toContain(ACCOUNT);
  });

  it('fails a message whose lease was lost mid-run with LOCK_LOST, and only warns about it, by template', async () => {
    const holding = outcome('hold', { accountId: ACCOUNT });
    await running.gate.reached(1);
    await admin.connect();
    expect(await admin.del(resourceKeys(keyPrefix, `acct:${ACCOUNT}`).lock)).toBe(1);
    running.gate.open();

    expect(await holding).toEqual({
      code: 'LOCK_LOST',
      message: `The lock on "${TEMPLATE}" was lost before the operation finished; retry.`,
      resource: TEMPLATE,
      retryAfter: 1,
    });
    expect(running.logger.errors()).toEqual([]);
    expect(running.logger.entries).toContainEqual({
      level: 'warn',
      context: 'LockModule',
      message: expect.stringMatching(/^Lock "acct:<accountId>" was lost: the store no longer holds this lease/),
    });
    expect(output()).not.toContain(ACCOUNT);
  });

  it('fails a message whose values make no usable key with LOCK_KEY_INVALID, and logs no error', async () => {
    const failed = await outcome('debit', { accountId: ACCOUNT.repeat(60) });

    expect(failed).toEqual({
      code: 'LOCK_KEY_INVALID',
      message: 'The lock key is over the limit of 1024 bytes; use shorter values.',
      resource: TEMPLATE,
    });
    expect(running.gate.entered).toBe(0);
    expect(running.logger.errors()).toEqual([]);
    expect(output()).not.toContain(ACCOUNT);
  });

  it('fails a message with LOCK_UNAVAILABLE while the lock store is down, and logs the outage once, by template', async () => {
    await redis.stop();
    const failed = await outcome('debit', { accountId: ACCOUNT });

    expect(failed).toEqual({
      code: 'LOCK_UNAVAILABLE',
      message: 'The lock store is unavailable; retry later.',
      resource: TEMPLATE,
      retryAfter: 1,
    });
    expect(running.gate.entered).toBe(0);
    // the module's own report of an outage, one line without a stack; no exception handler logs the message
    expect(running.logger.errors()).toEqual([
      {
        level: 'error',
        context: 'LockModule',
        message: expect.stringMatching(/^Lock store failed to acquire "acct:<accountId>": [^\n]+$/),
      },
    ]);
    expect(output()).not.toContain(ACCOUNT);
  });
});

describe.each(['tcp', 'nats'] as const)(
  "a %s message handler that calls LockService itself, in a microservice connected with Nest's defaults",
  (kind) => {
    let nats: NatsServerHandle | undefined;
    let redis: RedisServerHandle;
    let running: RunningHybrid;

    beforeAll(async () => {
      if (kind === 'nats') nats = await startNatsServer();
      redis = await startRedisServer();
    });

    afterAll(async () => {
      await nats?.stop();
      await redis.stop();
    });

    beforeEach(async () => {
      const transport: MicroserviceTransport = nats ? { kind: 'nats', url: nats.url } : { kind: 'tcp' };
      running = await startHybrid(transport, { redis: redis.url, keyPrefix: uniquePrefix() });
    });

    afterEach(async () => {
      await running.close();
    });

    it("fails as Nest's unknown errors do (no interceptor maps it), with a log line that names the key template only", async () => {
      const held = await running.app.get(LockService).acquire(`acct:${ACCOUNT}`);
      const failed = await running.send('transfer', { accountId: ACCOUNT }).catch((error: unknown) => error);
      await held.release();

      expect(failed).toEqual({ status: 'error', message: 'Internal server error' });
      expect(running.logger.errors()).toEqual([
        {
          level: 'error',
          context: 'RpcExceptionsHandler',
          message: expect.stringMatching(/^Lock "acct:<accountId>" is held by another owner/),
        },
      ]);
      expect(running.logger.printed.join('\n')).not.toContain(ACCOUNT);
    });
  },
);
