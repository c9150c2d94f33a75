import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { inspect } from 'node:util';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { LockModule, LockService, LockStoreError, type LockModuleOptions } from '../lib/index.js';
import { resourceKeys } from '../lib/stores/redis/resource-keys.js';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy.js';
import { startRedisServer, type RedisServerHandle } from './support/redis-server.js';
import { uniquePrefix } from './support/stores.js';
import { startInventoryApp, type Platform, type RunningApp } from './support/nest-app/create-app.js';

/** The module's own client gives up on a command after 2 s (OWNED_CLIENT_DEFAULTS); this is what it may take beyond. */
const DEFAULT_COMMAND_TIMEOUT = 2000;
const MARGIN = 1000;

let server: RedisServerHandle;
let admin: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  admin = new Redis(server.url);
  await admin.call('ACL', 'SETUSER', 'guarded', 'on', '>right-secret', '~*', '&*', '+@all');
  await admin.call('ACL', 'SETUSER', 'noscripts', 'on', '>pw', '~*', '&*', '+@all', '-@scripting');
});

afterAll(async () => {
  await admin.quit();
  await server.stop();
});

/** Boots an application with only LockModule; resolves the app, or rejects with what the bootstrap threw. */
async function boot(options: LockModuleOptions) {
  const ref = await Test.createTestingModule({ imports: [LockModule.forRoot(options)] }).compile();
  const app = ref.createNestApplication({ logger: false });
  try {
    await app.init();
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  return app;
}

/** What `operation` threw (or `undefined`) and how long it took. */
async function timed(operation: () => Promise<unknown>): Promise<{ error: unknown; elapsed: number }> {
  const started = performance.now();
  const error = await operation().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return { error, elapsed: performance.now() - started };
}

const urlFor = (user: string, password: string) => `redis://${user}:${password}@127.0.0.1:${server.port}`;

describe('LockModule bootstrap against a Redis that will not serve it', () => {
  it('fails with LockStoreError naming the missing permission when the Redis user may not run scripts', async () => {
    const { error, elapsed } = await timed(() => boot({ redis: urlFor('noscripts', 'pw') }));
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/may not run scripts.*NOPERM/);
    expect((error as Error).message).toMatch(/\+@scripting/);
    expect(elapsed).toBeLessThan(DEFAULT_COMMAND_TIMEOUT);
  });

  it('fails with LockStoreError on a wrong password, promptly, without the password anywhere in the error', async () => {
    const { error, elapsed } = await timed(() => boot({ redis: urlFor('guarded', 'wrong-secret') }));
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/WRONGPASS/);
    expect(elapsed).toBeLessThan(DEFAULT_COMMAND_TIMEOUT);
    // the error, its cause and the cause's properties are what a logger prints
    const printed = inspect(error, { depth: null, showHidden: true });
    expect(printed).not.toContain('wrong-secret');
    expect(printed).not.toContain('right-secret');
  });

  it('fails within the command timeout, naming the node, when Redis accepts connections but never answers', async () => {
    const proxy = await startFaultProxy(server.url);
    try {
      proxy.blackhole();
      const { error, elapsed } = await timed(() => boot({ redis: proxy.url }));
      expect(error).toBeInstanceOf(LockStoreError);
      expect((error as Error).message).toMatch(
        new RegExp(`^Lock store failed to reach Redis at ${new URL(proxy.url).host}: .*(timeout|ETIMEDOUT)`),
      );
      expect(elapsed).toBeLessThan(DEFAULT_COMMAND_TIMEOUT + MARGIN);
    } finally {
      await proxy.close();
    }
  });
});

describe('LockService calls while Redis is unreachable, with the module defaults', () => {
  let proxy: FaultProxy;
  let app: Awaited<ReturnType<typeof boot>>;
  let locks: LockService;

  beforeEach(async () => {
    proxy = await startFaultProxy(server.url);
    app = await boot({ redis: proxy.url, keyPrefix: uniquePrefix() });
    locks = app.get(LockService);
  });

  afterEach(async () => {
    proxy.heal();
    await app.close();
    await proxy.close();
  });

  const calls: Array<[string, (locks: LockService) => Promise<unknown>]> = [
    ['acquire', (l) => l.acquire('down')],
    ['acquire with a 30 s wait', (l) => l.acquire('down', { wait: '30s' })],
    ['tryAcquire', (l) => l.tryAcquire('down')],
    ['using with a 30 s wait', (l) => l.using('down', () => 'ran', { wait: '30s' })],
    ['isLocked', (l) => l.isLocked('down')],
  ];

  /** Runs every call at once; each must reject with LockStoreError within the bound. */
  async function everyCall(): Promise<Array<{ name: string; error: string; inTime: boolean }>> {
    return Promise.all(
      calls.map(async ([name, call]) => {
        const { error, elapsed } = await timed(() => call(locks));
        return {
          name,
          error: (error as Error | undefined)?.constructor.name ?? 'none',
          inTime: elapsed < DEFAULT_COMMAND_TIMEOUT + MARGIN,
        };
      }),
    );
  }
  const expected = calls.map(([name]) => ({ name, error: 'LockStoreError', inTime: true }));

  it('rejects every call with LockStoreError within the command timeout when Redis stops answering', async () => {
    proxy.blackhole();
    expect(await everyCall()).toEqual(expected);
  });

  it('rejects every call with LockStoreError within the command timeout when connections are refused', async () => {
    await proxy.refuse(true);
    proxy.cutAll();
    expect(await everyCall()).toEqual(expected);
    await proxy.refuse(false);
  });

  it('names the server and why in every refusal after startup, as the bootstrap does, not the client text', async () => {
    await proxy.refuse(true);
    proxy.cutAll();
    const messages = await Promise.all(
      calls.map(async ([, call]) => ((await timed(() => call(locks))).error as Error).message),
    );
    const server = new URL(proxy.url).host.replace(/\./g, '\\.');
    for (const message of messages) {
      expect(message).toMatch(
        new RegExp(
          `^Lock store failed to \\w+: cannot reach Redis at ${server}: connection refused \\(ECONNREFUSED\\)$`,
        ),
      );
    }
    await proxy.refuse(false);
  });
});

/** The key `inventory:<productId>` gives a value: `%` and the template's separator `:` written as UTF-8 escapes. */
const inventoryKey = (value: string) =>
  `inventory:${value.replace(/[%:]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)}`;

describe.each<Platform>(['express', 'fastify'])('keys from request input on %s', (platform) => {
  let running: RunningApp;
  let keyPrefix: string;
  const post = (path: string, body?: unknown) =>
    fetch(`${running.url}${path}`, {
      method: 'POST',
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    keyPrefix = uniquePrefix();
    // exposeResolvedKeys: the 409 body then names the resolved key, which these tests compare
    running = await startInventoryApp(platform, server.url, { redis: server.url, keyPrefix, exposeResolvedKeys: true });
  });

  afterAll(() => running.close());

  it.each(['{a}', 'a}b{c', '}{', 'ключ:🔒', 'line\nbreak', 'tab\there', ' spaced ', '%7B', 'a/b'])(
    'locks the same resource for the same value %j every time, and another one for any other value',
    async (value) => {
      const path = (id: string) => `/inventory/${encodeURIComponent(id)}/hold`;
      const gate = `hold-${randomUUID()}`;
      const holding = post(`${path(value)}?gate=${gate}`);
      const lockKey = resourceKeys(keyPrefix, inventoryKey(value)).lock;
      while ((await admin.exists(lockKey)) === 0) await new Promise((resolve) => setTimeout(resolve, 5));

      try {
        const same = await post(`${path(value)}?ms=0`);
        expect(same.status).toBe(409);
        expect(((await same.json()) as { resource: string }).resource).toBe(inventoryKey(value));
        for (const sibling of [`${value}x`, value.trim() === value ? ` ${value}` : value.trim(), value.toUpperCase()]) {
          if (sibling === value) continue;
          expect((await post(`${path(sibling)}?ms=0`)).status).toBe(201);
        }
      } finally {
        await post(`/inventory/gates/${gate}/open`);
      }
      expect((await holding).status).toBe(201);
      expect(await admin.exists(lockKey)).toBe(0);
    },
  );

  it('refuses a key over maxKeyLength with 400 and writes nothing to Redis', async () => {
    const before = await admin.dbsize();
    const response = await post('/inventory/by-sku', { sku: 'é'.repeat(600) });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toMatch(/1210 bytes long, over the limit of 1024/);
    expect(await admin.dbsize()).toBe(before);
  });
});
