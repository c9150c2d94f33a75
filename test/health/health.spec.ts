import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { Redis, type RedisOptions } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  LockModule,
  LockService,
  MemoryLockStore,
  RedisLockStore,
  checkLockStore,
  type LockModuleOptions,
} from '../../lib/index.js';
import { ALL_SCRIPTS } from '../../lib/stores/redis/scripts/index.js';
import { STORE_SCRIPTS } from '../../lib/stores/redis/redis-checks.js';
import { LockHealthIndicator } from '../../lib/terminus.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

const TIMEOUT = 500;
/** Event loop, timers and a busy CI machine, on top of the timeout. */
const MARGIN = 400;

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: LockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.locks.isHealthy('locks', { timeout: TIMEOUT })]);
  }
}

let server: RedisServerHandle;
let admin: Redis;
let app: INestApplication | undefined;
const cleanups: Array<() => unknown> = [];

async function startApp(options: LockModuleOptions): Promise<{ indicator: LockHealthIndicator; url: string }> {
  @Module({
    imports: [TerminusModule, LockModule.forRoot(options)],
    controllers: [HealthController],
    providers: [LockHealthIndicator],
  })
  class AppModule {}
  const ref = await Test.createTestingModule({ imports: [AppModule] }).compile();
  app = ref.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return { indicator: app.get(LockHealthIndicator), url };
}

/** Runs the indicator and says how long it took. */
async function timedCheck(indicator: LockHealthIndicator) {
  const started = performance.now();
  const result = await indicator.isHealthy('lock', { timeout: TIMEOUT });
  return { result: result.lock as Record<string, unknown>, elapsed: performance.now() - started };
}

/** Checks until the indicator says `up` (each check bounded by the timeout); fails after `within` ms. */
async function untilUp(indicator: LockHealthIndicator, within = 10_000) {
  const deadline = performance.now() + within;
  for (;;) {
    const { result } = await timedCheck(indicator);
    if (result.status === 'up') return result;
    if (performance.now() > deadline) throw new Error(`still down after ${within} ms: ${JSON.stringify(result)}`);
    await sleep(100);
  }
}

beforeAll(async () => {
  server = await startRedisServer();
  admin = new Redis(server.url, { lazyConnect: true });
  admin.on('error', () => undefined);
});

afterEach(async () => {
  await app?.close();
  app = undefined;
  for (const undo of cleanups.splice(0).reverse()) await undo();
  if (!server.running) await server.start();
});

afterAll(async () => {
  admin.disconnect();
  await server.stop();
});

describe('LockHealthIndicator', () => {
  it('is up with the store, its round-trip time and loaded scripts while Redis answers', async () => {
    const { indicator } = await startApp({ redis: server.url });
    const { result } = await timedCheck(indicator);
    expect(result).toEqual({
      status: 'up',
      store: 'RedisLockStore',
      roundTripMs: expect.any(Number),
      scriptsLoaded: true,
    });
    expect(result.roundTripMs).toBeLessThan(TIMEOUT);
  });

  it('reports down within its timeout when Redis stops, and up again after it restarts', async () => {
    const { indicator } = await startApp({ redis: server.url });
    expect((await timedCheck(indicator)).result.status).toBe('up');

    await server.stop();
    const down = await timedCheck(indicator);
    expect(down.result).toEqual({
      status: 'down',
      store: 'RedisLockStore',
      reason: expect.any(String),
      roundTripMs: expect.any(Number),
    });
    expect(down.elapsed).toBeLessThan(TIMEOUT + MARGIN);

    await server.start();
    const up = await untilUp(indicator);
    expect(up).toMatchObject({ status: 'up', scriptsLoaded: true });
    // the server restarted empty: the check loaded the scripts again, and locks work at once
    await admin.connect().catch(() => undefined);
    expect(await admin.script('EXISTS', ...ALL_SCRIPTS.map((script) => script.sha))).toEqual(ALL_SCRIPTS.map(() => 1));
    const lock = await app!.get(LockService).acquire('after-restart');
    expect(await lock.release()).toBe(true);
  });

  it('reports down at its timeout even for a client that would queue commands until Redis is back', async () => {
    const patient = new Redis(server.url, { maxRetriesPerRequest: null });
    patient.on('error', () => undefined);
    cleanups.push(() => patient.disconnect());
    const { indicator } = await startApp({ redis: patient });
    expect((await timedCheck(indicator)).result.status).toBe('up');

    await server.stop();
    const down = await timedCheck(indicator);
    expect(down.result).toMatchObject({ status: 'down', reason: `the lock store did not answer within ${TIMEOUT} ms` });
    expect(down.elapsed).toBeGreaterThanOrEqual(TIMEOUT - 5);
    expect(down.elapsed).toBeLessThan(TIMEOUT + MARGIN);

    await server.start();
    expect(await untilUp(indicator)).toMatchObject({ status: 'up' });
  });

  it('answers the health endpoint with 200 while up and 503 with the reason while Redis is down', async () => {
    const { url } = await startApp({ redis: server.url });
    const up = await fetch(`${url}/health`);
    expect(up.status).toBe(200);
    expect(await up.json()).toMatchObject({ status: 'ok', info: { locks: { status: 'up', scriptsLoaded: true } } });

    await server.stop();
    const started = performance.now();
    const down = await fetch(`${url}/health`);
    expect(performance.now() - started).toBeLessThan(TIMEOUT + MARGIN);
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({
      status: 'error',
      error: { locks: { status: 'down', store: 'RedisLockStore', reason: expect.any(String) } },
    });
  });

  it('is up for the memory store, which has no scripts', async () => {
    const { indicator } = await startApp({ store: new MemoryLockStore() });
    expect((await timedCheck(indicator)).result).toEqual({
      status: 'up',
      store: 'MemoryLockStore',
      roundTripMs: expect.any(Number),
    });
  });
});

describe('checkLockStore', () => {
  function redisStore(options: RedisOptions = {}) {
    const client = new Redis(server.url, { maxRetriesPerRequest: 1, ...options });
    client.on('error', () => undefined);
    const store = new RedisLockStore({ client, ownsClient: true });
    cleanups.push(() => store.close());
    return store;
  }

  it('loads the scripts again when the server has forgotten them, and says how many', async () => {
    const store = redisStore();
    await admin.connect().catch(() => undefined);
    await admin.script('FLUSH');
    expect(await checkLockStore(store)).toMatchObject({
      healthy: true,
      scriptsLoaded: true,
      scriptsReloaded: STORE_SCRIPTS.length,
    });
    expect(await checkLockStore(store)).not.toHaveProperty('scriptsReloaded');
  });

  it('is down with a reason naming the permission when the Redis user may not load scripts', async () => {
    await admin.connect().catch(() => undefined);
    await admin.call('ACL', 'SETUSER', 'no-scripts', 'on', '>pw', '~*', '+@all', '-@scripting');
    await admin.script('FLUSH');
    const status = await checkLockStore(redisStore({ username: 'no-scripts', password: 'pw' }));
    expect(status).toMatchObject({ healthy: false, store: 'RedisLockStore' });
    expect(status.healthy === false && status.reason).toMatch(/may not check or load scripts.*NOPERM/);
  });

  it('probes a store without health() by reading a key', async () => {
    const inner = new MemoryLockStore();
    const reads: string[] = [];
    const bare = {
      acquire: inner.acquire.bind(inner),
      release: inner.release.bind(inner),
      extend: inner.extend.bind(inner),
      extendMany: inner.extendMany.bind(inner),
      inspect: (key: string) => (reads.push(key), inner.inspect(key)),
      watch: inner.watch.bind(inner),
      close: inner.close.bind(inner),
    };
    expect(await checkLockStore(bare)).toMatchObject({ healthy: true });
    expect(reads).toHaveLength(1);
  });

  it('refuses a timeout that is not a positive whole number of ms', async () => {
    await expect(checkLockStore(new MemoryLockStore(), { timeout: 0 })).rejects.toThrow(/"timeout"/);
  });
});
