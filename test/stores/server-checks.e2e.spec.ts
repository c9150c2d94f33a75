import { inspect } from 'node:util';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  LockConfigurationError,
  LockLostError,
  LockModule,
  LockService,
  type LockLogger,
  type LockEvent,
  type LockModuleOptions,
} from '../../lib/index.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { freePort, startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { uniquePrefix } from '../support/stores.js';

/** Every policy Redis 7 offers besides noeviction: each can evict a lease. */
const EVICTING_POLICIES = [
  'allkeys-lru',
  'allkeys-lfu',
  'allkeys-random',
  'volatile-lru',
  'volatile-lfu',
  'volatile-random',
  'volatile-ttl',
];
const MAXMEMORY = 8 * 1024 * 1024;

/** A logger that keeps what it is told. */
function recordingLogger(): LockLogger & { readonly warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, warn: (message) => warnings.push(message), error: () => undefined };
}

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

/** What the bootstrap threw; an application that started after all is closed, and `undefined` returned. */
async function bootFailure(options: LockModuleOptions): Promise<unknown> {
  const app = await boot(options).catch((error: unknown) => ({ error }));
  if ('error' in app) return app.error;
  await app.close();
  return undefined;
}

let server: RedisServerHandle;
let admin: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  admin = new Redis(server.url);
});

afterAll(async () => {
  await admin.quit();
  await server.stop();
});

afterEach(async () => {
  await admin.config('SET', 'maxmemory', '0');
  await admin.config('SET', 'maxmemory-policy', 'noeviction');
  await admin.flushall();
});

describe('LockModule bootstrap on a Redis that may evict leases', () => {
  it.each(EVICTING_POLICIES)(
    'fails with LockConfigurationError naming the server, the policy %s and the fix',
    async (policy) => {
      await admin.config('SET', 'maxmemory', String(MAXMEMORY));
      await admin.config('SET', 'maxmemory-policy', policy);
      const error = await bootFailure({ redis: server.url });
      expect(error).toBeInstanceOf(LockConfigurationError);
      const message = (error as Error).message;
      expect(message).toContain(`127.0.0.1:${server.port} has maxmemory ${MAXMEMORY} bytes`);
      expect(message).toContain(`maxmemory-policy ${policy}`);
      expect(message).toContain('CONFIG SET maxmemory-policy noeviction');
      expect(message).toContain('acceptEvictionRisk: true');
    },
  );

  it.each([
    ['maxmemory is set with noeviction', MAXMEMORY, 'noeviction'],
    ['an evicting policy has no maxmemory to act on', 0, 'allkeys-lru'],
  ])('starts without a warning when %s', async (_case, maxmemory, policy) => {
    await admin.config('SET', 'maxmemory', String(maxmemory));
    await admin.config('SET', 'maxmemory-policy', policy);
    const logger = recordingLogger();
    const app = await boot({ redis: server.url, logger });
    await app.close();
    expect(logger.warnings).toEqual([]);
  });

  it('starts with a warning under acceptEvictionRisk, and a lease evicted under memory pressure is still signalled to its holder', async () => {
    // volatile-lru evicts only keys with an expiry: the filler below has none, so the leases are what goes
    await admin.config('SET', 'maxmemory', String(MAXMEMORY));
    await admin.config('SET', 'maxmemory-policy', 'volatile-lru');
    const logger = recordingLogger();
    const keyPrefix = uniquePrefix();
    const app = await boot({ redis: server.url, keyPrefix, logger, acceptEvictionRisk: true });
    try {
      expect(logger.warnings).toEqual([
        expect.stringContaining(
          `127.0.0.1:${server.port} has maxmemory ${MAXMEMORY} bytes with maxmemory-policy volatile-lru`,
        ),
      ]);
      expect(logger.warnings[0]).toContain('acceptEvictionRisk is true');
      const locks = app.get(LockService);
      const lost = new Promise<LockEvent<'lost'>>((resolve) => locks.on('lost', resolve));
      const lock = await locks.acquire('report', { ttl: 1500, autoRenew: true });
      const leaseKey = resourceKeys(keyPrefix, 'report').lock;
      const filler = 'x'.repeat(64 * 1024);
      for (let index = 0; (await admin.exists(leaseKey)) === 1; index++) {
        if (index === 1000) throw new Error('the lease was never evicted');
        // OOM: the server had nothing with an expiry left to evict, so the lease went with this write
        await admin.set(`filler:${index}`, filler).catch((error: Error) => {
          if (!/^OOM/.test(error.message)) throw error;
        });
      }
      const event = await lost;
      expect(event).toMatchObject({ key: 'report', reason: 'taken' });
      expect(lock.signal.aborted).toBe(true);
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect((lock.signal.reason as LockLostError).reason).toBe('taken');
    } finally {
      await app.close();
    }
  });

  it('fails naming the Redlock node that may evict leases, and only that one', async () => {
    const others = await Promise.all([startRedisServer(), startRedisServer()]);
    try {
      await admin.config('SET', 'maxmemory', String(MAXMEMORY));
      await admin.config('SET', 'maxmemory-policy', 'volatile-ttl');
      const nodes = [others[0].url, server.url, others[1].url];
      const error = await bootFailure({ redlock: { nodes } });
      expect(error).toBeInstanceOf(LockConfigurationError);
      const message = (error as Error).message;
      expect(message).toContain(`volatile-ttl on 127.0.0.1:${server.port}`);
      for (const other of others) expect(message).not.toContain(`:${other.port}`);

      const logger = recordingLogger();
      const app = await boot({ redlock: { nodes }, acceptEvictionRisk: true, logger });
      await app.close();
      expect(logger.warnings).toEqual([expect.stringContaining(`127.0.0.1:${server.port} has maxmemory`)]);
    } finally {
      await Promise.all(others.map((other) => other.stop()));
    }
  });
});

describe('LockModule bootstrap where CONFIG GET is refused', () => {
  it('warns once that the policy could not be checked, says how to check by hand, and starts', async () => {
    await admin.call('ACL', 'SETUSER', 'locker', 'on', '>locker-secret', '~*', '&*', '+@all', '-config');
    try {
      const logger = recordingLogger();
      const url = `redis://locker:locker-secret@127.0.0.1:${server.port}`;
      const app = await boot({ redis: url, keyPrefix: uniquePrefix(), logger });
      try {
        expect(logger.warnings).toHaveLength(1);
        const [warning] = logger.warnings;
        expect(warning).toContain(`Could not check the eviction policy of Redis 127.0.0.1:${server.port}`);
        expect(warning).toContain('the Redis user may not run CONFIG GET');
        expect(warning).toContain("CONFIG GET 'maxmemory*'");
        expect(inspect(logger.warnings)).not.toContain('locker-secret');
        const locks = app.get(LockService);
        expect(await locks.using('after-warning', () => 'ran')).toBe('ran');
      } finally {
        await app.close();
      }
    } finally {
      await admin.call('ACL', 'DELUSER', 'locker');
    }
  });

  it('warns that CONFIG is disabled or renamed on a server that renamed it, and starts', async () => {
    const renamed = await startRedisServer(['--rename-command', 'CONFIG', '']);
    try {
      const logger = recordingLogger();
      const app = await boot({ redis: renamed.url, logger });
      await app.close();
      expect(logger.warnings).toEqual([expect.stringContaining('CONFIG is disabled or renamed there')]);
    } finally {
      await renamed.stop();
    }
  });
});

describe('LockModule bootstrap on Redlock nodes that are one server', () => {
  it('refuses 127.0.0.1, localhost and 127.1 of one server as three nodes, naming them', async () => {
    const nodes = ['127.0.0.1', 'localhost', '127.1'].map((host) => `redis://${host}:${server.port}`);
    const error = await bootFailure({ redlock: { nodes } });
    expect(error).toBeInstanceOf(LockConfigurationError);
    const message = (error as Error).message;
    expect(message).toContain('nodes[0], nodes[1] and nodes[2] are one server');
    expect(message).toContain(`127.0.0.1:${server.port}, localhost:${server.port}, 127.1:${server.port}`);
  });

  it('refuses them even when opening the connections takes longer than the per-node timeout of lock operations', async () => {
    // no connection opens and answers within 1 ms: the verdict must not depend on how busy the machine is
    const nodes = ['127.0.0.1', 'localhost', '127.1'].map((host) => `redis://${host}:${server.port}`);
    const error = await bootFailure({ redlock: { nodes, timeout: 1 } });
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as Error).message).toContain('nodes[0], nodes[1] and nodes[2] are one server');
  });

  it('refuses two names of one server even when the other nodes do not answer and no quorum is left', async () => {
    const closed = await Promise.all([freePort(), freePort(), freePort()]);
    const nodes = [
      `redis://127.0.0.1:${server.port}`,
      `redis://localhost:${server.port}`,
      ...closed.map((port) => `redis://127.0.0.1:${port}`),
    ];
    const error = await bootFailure({ redlock: { nodes } });
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as Error).message).toContain('nodes[0] and nodes[1] are one server');
  });

  it('names only the two nodes that are one server when the third is another', async () => {
    const other = await startRedisServer();
    try {
      const nodes = [`redis://127.0.0.1:${server.port}`, other.url, `redis://localhost:${server.port}`];
      const error = await bootFailure({ redlock: { nodes } });
      expect(error).toBeInstanceOf(LockConfigurationError);
      const message = (error as Error).message;
      expect(message).toContain('nodes[0] and nodes[2] are one server');
      expect(message).not.toContain(`:${other.port}`);
    } finally {
      await other.stop();
    }
  });
});
