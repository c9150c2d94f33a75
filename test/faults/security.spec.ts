import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';
import {
  Controller,
  Inject,
  Module,
  Param,
  Post,
  Query,
  type INestApplication,
  type LoggerService,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { LockModule, LockService, RedisLockStore, WithLock } from '../../lib/index.js';
import type { AcquireRequest, AcquireResult } from '../../lib/store.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { startChild } from '../support/child-process.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import { recordRow } from './scenario.js';

const ADMIN = Symbol('ADMIN');
const PREFIX = 'tenant-a:locks:';
const COMMAND_TIMEOUT = 300;

/** Everything the application logged, each call as one line with its arguments formatted in full. */
class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  log = (...args: unknown[]) => this.capture('log', args);
  error = (...args: unknown[]) => this.capture('error', args);
  warn = (...args: unknown[]) => this.capture('warn', args);
  debug = (...args: unknown[]) => this.capture('debug', args);
  verbose = (...args: unknown[]) => this.capture('verbose', args);
  fatal = (...args: unknown[]) => this.capture('fatal', args);

  private capture(level: string, args: unknown[]): void {
    this.lines.push(
      `[${level}] ${args.map((arg) => (typeof arg === 'string' ? arg : inspect(arg, { depth: null }))).join(' ')}`,
    );
  }
}

/** The Redis store, noting every token the application sends. */
class RecordingStore extends RedisLockStore {
  readonly tokens: string[] = [];

  override acquire(request: AcquireRequest): Promise<AcquireResult> {
    this.tokens.push(request.token);
    return super.acquire(request);
  }
}

@Controller('docs')
class DocsController {
  constructor(
    private readonly locks: LockService,
    @Inject(ADMIN) private readonly admin: Redis,
  ) {}

  /** Holds `doc:<id>` for `ms`, then answers with the lock handle itself (and, asked, what the store says). */
  @Post(':id/hold')
  @WithLock('doc:<id>', { ttl: 600, fencing: true })
  async hold(@Param('id') id: string, @Query('ms') ms = '0', @Query('inspect') state?: string): Promise<unknown> {
    await sleep(Number(ms));
    return { lock: this.locks.current(), state: state ? await this.locks.inspect(`doc:${id}`) : undefined };
  }

  /** Loses its lease mid-run (deleted behind its back) and fails with the LockLostError. */
  @Post(':id/lose')
  @WithLock('doc:<id>', { ttl: 600 })
  async lose(@Param('id') id: string): Promise<never> {
    const lock = this.locks.current()!;
    await this.admin.del(resourceKeys(PREFIX, `doc:${id}`).lock);
    if (!lock.signal.aborted) await once(lock.signal, 'abort');
    throw lock.signal.reason;
  }
}

describe('security', () => {
  let server: RedisServerHandle;
  let proxy: FaultProxy;
  let admin: Redis;
  let client: Redis;
  let store: RecordingStore;
  let logger: CapturingLogger;
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    server = await startRedisServer();
    proxy = await startFaultProxy(server.url);
    admin = new Redis(server.url);
    client = new Redis(proxy.url, { commandTimeout: COMMAND_TIMEOUT, maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    store = new RecordingStore({ client, keyPrefix: PREFIX });
    logger = new CapturingLogger();

    @Module({
      imports: [LockModule.forRoot({ store })],
      controllers: [DocsController],
      providers: [{ provide: ADMIN, useValue: admin }],
    })
    class SecurityAppModule {}

    app = await NestFactory.create(SecurityAppModule, { logger, abortOnError: false });
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app.close();
    await store.close();
    client.disconnect();
    await admin.quit();
    await proxy.close();
    await server.stop();
  });

  /** A request, with everything the client can see of the response as one text. */
  async function post(path: string): Promise<{ status: number; text: string; body: string }> {
    const response = await fetch(`${url}${path}`, { method: 'POST' });
    const body = await response.text();
    const headers = JSON.stringify(Object.fromEntries(response.headers.entries()));
    return { status: response.status, text: `${response.status} ${headers} ${body}`, body };
  }

  it('never shows a lease token in a response, a log line or an error, through lost leases and store outages', async () => {
    const started = performance.now();
    const seen: string[] = [];
    const statuses: number[] = [];
    const faults: string[] = [];
    const note = (response: { status: number; text: string }) => {
      statuses.push(response.status);
      seen.push(response.text);
    };
    const failure = async (operation: Promise<unknown>) => {
      const error = await operation.then(
        () => new Error('expected a failure'),
        (caught: unknown) => caught,
      );
      seen.push(`${String(error)}\n${(error as Error).stack}\n${inspect(error, { depth: null, showHidden: true })}`);
      return error;
    };
    const locks = app.get(LockService);

    // a response that carries the lock handle itself; four 409s while it is held
    const contended = await Promise.all([
      post('/docs/a/hold?ms=300&inspect=1'),
      ...Array.from({ length: 4 }, () => post('/docs/a/hold')),
    ]);
    contended.forEach(note);
    // a lease deleted under its holder: 503 and a warning
    note(await post('/docs/b/lose'));
    faults.push('1 lease deleted');

    // the store black-holed: the acquire times out (503), then a release and a renewal time out (logged)
    proxy.blackhole();
    note(await post('/docs/c/hold'));
    await failure(locks.acquire('direct', { wait: 1000 }));
    proxy.heal();
    const releasing = post('/docs/d/hold?ms=250');
    const renewed = await locks.acquire('renewed', { ttl: 600, autoRenew: true });
    await sleep(100);
    proxy.blackhole();
    note(await releasing);
    await once(renewed.signal, 'abort');
    seen.push(inspect(renewed.signal.reason, { depth: null, showHidden: true }));
    await failure(renewed.extend());
    proxy.heal();
    faults.push('2 black-holes of the store');

    // the store cut: a release dies with the connection
    const cutting = post('/docs/e/hold?ms=200');
    await sleep(100);
    proxy.cutAll();
    note(await cutting);
    faults.push('1 cut');

    // a lock key of another type: the Redis error names the command it refused, arguments and all
    await admin.hset(resourceKeys(PREFIX, 'typed').lock, 'owner', 'another feature');
    await admin.hset(resourceKeys(PREFIX, 'doc:typed').lock, 'owner', 'another feature');
    await failure(locks.acquire('typed'));
    note(await post('/docs/typed/hold'));
    faults.push('2 keys of another type');

    const tokens = store.tokens;
    const texts = [...seen, ...logger.lines];
    const leaked = tokens.filter((token) => texts.some((text) => text.includes(token)));
    recordRow({
      scenario: 'token secrecy (responses, logs, errors)',
      processes: 1,
      operations: statuses.length + 4,
      sections: tokens.length,
      faults: faults.join(', '),
      violations: leaked.length,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      notes: `${tokens.length} tokens searched for in ${texts.length} responses, log lines and errors (${texts.join('').length} characters)`,
    });

    expect(leaked).toEqual([]);
    expect(statuses.slice(0, 5).sort()).toEqual([201, 409, 409, 409, 409]);
    expect(statuses.slice(5)).toEqual([503, 503, 201, 201, 503]);
    // the run did go through every path that logs (naming templates: a direct call without metricKey, none)
    expect(logger.lines.some((line) => /\[warn\] Lock "doc:<id>" was lost/.test(line))).toBe(true);
    expect(logger.lines.some((line) => /\[warn\] The lock was lost/.test(line))).toBe(true);
    expect(logger.lines.some((line) => /\[error\] Lock store failed to release "doc:<id>"/.test(line))).toBe(true);
    expect(tokens.length).toBeGreaterThan(8);
  });

  it('keeps crafted key parts inside their own resource and the key prefix', async () => {
    const started = performance.now();
    await admin.flushall();
    const locks = app.get(LockService);
    const victim = await locks.acquire('doc:1', { ttl: 30_000, fencing: true });
    const names = resourceKeys(PREFIX, 'doc:1');
    const before = await admin.mget(names.lock, names.fence);
    const crafted = [
      '1}',
      '1}:fence',
      '{1}',
      '1%7D',
      '%7B1%7D',
      '1:fence',
      '1}:released',
      '}',
      '{',
      '*',
      '1\r\n*1\r\n$8\r\nFLUSHALL\r\n',
      '../1',
      '1 ',
      '1\n',
      'ключ:🔒',
    ];
    const statuses: number[] = [];
    for (const id of crafted) statuses.push((await post(`/docs/${encodeURIComponent(id)}/hold`)).status);
    const tooLong = await post(`/docs/${'x'.repeat(2000)}/hold`);

    const after = await admin.mget(names.lock, names.fence);
    const expected = new Set([
      names.lock,
      names.fence,
      // the key `doc:<id>` gives an id: `%` and the template's separator `:` as UTF-8 escapes
      ...crafted.map(
        (id) =>
          resourceKeys(PREFIX, `doc:${id.replace(/[%:]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`)
            .fence,
      ),
    ]);
    const keys = await admin.keys('*');
    const outside = keys.filter((key) => !expected.has(key));
    recordRow({
      scenario: 'crafted key parts',
      processes: 1,
      operations: crafted.length + 1,
      sections: crafted.length,
      faults: `${crafted.length} hostile ids, 1 id of 2000 bytes`,
      violations:
        statuses.filter((status) => status !== 201).length + outside.length + (tooLong.status === 400 ? 0 : 1),
      seconds: Math.round((performance.now() - started) / 100) / 10,
    });

    // none of them met the held doc:1 (a 409) or touched its lease or fence
    expect(statuses).toEqual(crafted.map(() => 201));
    expect(after).toEqual(before);
    expect(victim.isHeld).toBe(true);
    // every key in Redis is one of the layout's own names under the prefix; FLUSHALL was a key, not a command
    expect(outside).toEqual([]);
    expect(keys.every((key) => key.startsWith(`${PREFIX}{`))).toBe(true);
    // a key too long is refused before it reaches Redis, with a body that quotes none of it
    expect(tooLong.status).toBe(400);
    expect(JSON.parse(tooLong.body).message).toBe('The lock key is over the limit of 1024 bytes; use shorter values.');
    expect(await admin.keys('*x*')).toEqual([]);
    await victim.release();
  });

  it('keeps no per-key state in the process after 100,000 distinct keys, and none in Redis without fencing', async () => {
    const keyPrefix = uniquePrefix();
    const child = startChild(
      fileURLToPath(new URL('./distinct-keys.child.ts', import.meta.url)),
      { REDIS_URL: testRedisUrl(), KEY_PREFIX: keyPrefix, KEYS: '100000' },
      { nodeArgs: ['--expose-gc'] },
    );
    try {
      await child.waitFor('result ', 100_000);
      const result = JSON.parse(child.output().split('result ')[1]) as {
        keys: number;
        seconds: number;
        heapBefore: number;
        heapAfter: number;
        manager: Record<string, number>;
        holder: Record<string, number>;
        redisKeys: number;
      };
      const growth = result.heapAfter - result.heapBefore;
      const left = [...Object.values(result.manager), ...Object.values(result.holder), result.redisKeys];
      // a leaked entry per key (a key string and a map slot, at least 40 bytes) would be 4 MB
      const budget = 2 * 1024 * 1024;
      recordRow({
        scenario: '100,000 distinct keys',
        processes: 1,
        operations: result.keys,
        sections: result.keys,
        faults: 'none (memory check)',
        violations: left.filter((count) => count !== 0).length + (growth > budget ? 1 : 0),
        seconds: result.seconds,
        notes: `heap after GC grew ${Math.round(growth / 1024)} KB over 100,000 keys; maps left: ${JSON.stringify(result.manager)}; Redis keys left: ${result.redisKeys}`,
      });

      expect(result.manager).toEqual({ held: 0, queues: 0, renewed: 0, channels: 0 });
      expect(result.holder).toEqual({ held: 0, queues: 0, renewed: 0, channels: 0 });
      expect(result.redisKeys).toBe(0);
      expect(growth).toBeLessThan(budget);
    } finally {
      await child.kill();
    }
  }, 120_000);
});
