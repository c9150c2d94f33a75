import { inspect } from 'node:util';
import { Controller, Inject, Injectable, Module, Param, Post, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { LockService, LockModule, WithLock } from '../../lib/index.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { uniquePrefix } from '../support/stores.js';
import { CapturedLogger } from '../transports/fixtures/captured-logger.js';
import { Gate } from '../transports/fixtures/gate.js';

/** An account number as a key part: server data no output may show unless the application opts in. */
const ACCOUNT = 'SECRET-ACCOUNT-4242';
const ADMIN = Symbol('admin');
const KEY_PREFIX = Symbol('keyPrefix');

/** A nightly job that runs once across instances: a busy key skips it. */
@Injectable()
class Statements {
  @WithLock('acct:<0>', { onContention: 'skip' })
  async send(_accountId: string): Promise<string> {
    return 'sent';
  }
}

@Controller('accounts')
class AccountsController {
  static gate = new Gate();

  constructor(
    private readonly locks: LockService,
    @Inject(ADMIN) private readonly admin: Redis,
    @Inject(KEY_PREFIX) private readonly keyPrefix: string,
  ) {}

  @Post(':accountId/debit')
  @WithLock('acct:<accountId>')
  async debit(@Param('accountId') accountId: string): Promise<{ debited: boolean }> {
    await AccountsController.gate.enter();
    return { debited: accountId.length > 0 };
  }

  /** Loses its lease (deleted behind its back) and fails with the reason, as work that honours its signal does. */
  @Post(':accountId/close')
  @WithLock('acct:<accountId>', { ttl: '1s' })
  async close(@Param('accountId') accountId: string): Promise<{ closed: boolean }> {
    const { signal } = this.locks.current()!;
    await this.admin.del(resourceKeys(this.keyPrefix, `acct:${accountId}`).lock);
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    if (signal.aborted) throw signal.reason;
    return { closed: true };
  }
}

/**
 * Runs an HTTP app through contention (a 409, a direct acquire that is refused, a skipped job), a lease lost
 * mid-request, a key over maxKeyLength and a store outage, and returns everything it showed anyone: every log
 * line at every level, every response (status, headers, body), and every error a direct call threw, printed.
 */
async function everythingShown(exposeResolvedKeys: boolean): Promise<string> {
  const redis: RedisServerHandle = await startRedisServer();
  const admin = new Redis(redis.url);
  const keyPrefix = uniquePrefix();
  const shown: string[] = [];
  const logger = new CapturedLogger();
  let app: INestApplication | undefined;
  try {
    @Module({
      imports: [LockModule.forRoot({ redis: redis.url, keyPrefix, exposeResolvedKeys })],
      controllers: [AccountsController],
      providers: [Statements, { provide: ADMIN, useValue: admin }, { provide: KEY_PREFIX, useValue: keyPrefix }],
    })
    class AccountsAppModule {}
    app = await NestFactory.create(AccountsAppModule, { logger, abortOnError: false });
    await app.listen(0, '127.0.0.1');
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const post = async (path: string): Promise<number> => {
      const response = await fetch(`${url}/accounts/${path}`, { method: 'POST' });
      shown.push(`${response.status} ${JSON.stringify([...response.headers])} ${await response.text()}`);
      return response.status;
    };
    const failure = async (call: Promise<unknown>): Promise<void> => {
      const error = await call.then(
        () => new Error('expected a failure'),
        (caught: unknown) => caught,
      );
      shown.push(`${String(error)}\n${(error as Error).stack}\n${inspect(error, { depth: null })}`);
    };
    const locks = app.get(LockService);
    const gate = (AccountsController.gate = new Gate());

    const holding = post(`${ACCOUNT}/debit`);
    await gate.reached(1);
    const statuses = [await post(`${ACCOUNT}/debit`)];
    await failure(locks.acquire(`acct:${ACCOUNT}`, { metricKey: 'acct:<accountId>' }));
    await failure(locks.acquire(`acct:${ACCOUNT}`));
    expect(await app.get(Statements).send(ACCOUNT)).toBeUndefined();
    gate.open();
    statuses.push(await holding);
    statuses.push(await post(`${ACCOUNT}/close`));
    statuses.push(await post(`${ACCOUNT.repeat(60)}/debit`));
    await failure(locks.acquire(`acct:${ACCOUNT.repeat(60)}`));
    await redis.stop();
    statuses.push(await post(`${ACCOUNT}/debit`));
    await failure(locks.acquire(`acct:${ACCOUNT}`, { metricKey: 'acct:<accountId>' }));
    expect(statuses).toEqual([409, 201, 503, 400, 503]);

    const levels = new Set(logger.entries.map((entry) => entry.level));
    // the run went through a line at each level the module logs at
    expect([...levels].sort()).toEqual(expect.arrayContaining(['debug', 'error', 'warn']));
    return [...logger.printed, ...shown].join('\n');
  } finally {
    await app?.close();
    admin.disconnect();
    await redis.stop();
  }
}

describe('everything an HTTP app shows about its locks', () => {
  it('names no resolved key, in any log line at any level, response or error message', async () => {
    const shown = await everythingShown(false);
    expect(shown).toContain('acct:<accountId>');
    expect(shown).not.toContain(ACCOUNT);
  });

  it('names the resolved key where the application opted in with exposeResolvedKeys', async () => {
    const shown = await everythingShown(true);
    expect(shown).toContain(`Lock "acct:${ACCOUNT}" is held by another owner`);
    expect(shown).toContain(`"resource":"acct:${ACCOUNT}"`);
  });
});
