import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  LockConfigurationError,
  LockManager,
  LockModule,
  LockService,
  MemoryLockStore,
  RedisLockStore,
  RedlockStore,
  WithLock,
  type LockModuleOptions,
} from '../../lib/index.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

/** What a bootstrap with `imports` threw (compile and init), or `undefined` when it started. */
async function bootstrapError(imports: unknown[]): Promise<unknown> {
  try {
    const ref = await Test.createTestingModule({ imports: imports as never[] }).compile();
    const app = ref.createNestApplication({ logger: false });
    await app.init();
    await app.close();
    return undefined;
  } catch (error) {
    return error;
  }
}

/** What `fn` threw, synchronously or not, or `undefined`. */
async function thrownBy(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
    return undefined;
  } catch (error) {
    return error;
  }
}

/** Checks that `error` is a LockConfigurationError about `option` whose message matches `message`. */
function expectRefusal(error: unknown, option: string, message: RegExp | string): void {
  expect(error).toBeInstanceOf(LockConfigurationError);
  expect((error as LockConfigurationError).option).toBe(option);
  if (typeof message === 'string') expect((error as Error).message).toContain(message);
  else expect((error as Error).message).toMatch(message);
}

/** Stands for ConfigService: what the environment does not set, it does not have. */
@Injectable()
class Settings {
  get(name: string): string | undefined {
    return process.env[name];
  }
}

@Module({ providers: [Settings], exports: [Settings] })
class SettingsModule {}

describe('options with a name no options object has', () => {
  const redis = () => testRedisUrl();

  it.each<[string, LockModuleOptions | Record<string, unknown>, string, string]>([
    ['fencng', { fencng: true }, 'fencng', 'did you mean "fencing"?'],
    ['ttll', { ttll: '5s' }, 'ttll', 'did you mean "ttl"?'],
    ['redisUrl', { redisUrl: 'redis://127.0.0.1:6390' }, 'redisUrl', 'did you mean "redis"?'],
    ['url', { url: 'redis://127.0.0.1:6390' }, 'url', 'a connection URL goes in "redis"'],
    ['retry.minDelai', { retry: { minDelai: 10 } }, 'retry.minDelai', 'did you mean "minDelay"?'],
    [
      'telemetry.resolvedKey',
      { telemetry: { resolvedKey: true } },
      'telemetry.resolvedKey',
      'did you mean "resolvedKeys"?',
    ],
    [
      'redlock.node',
      { redlock: { node: ['redis://a', 'redis://b', 'redis://c'] } },
      'redlock.node',
      'did you mean "nodes"?',
    ],
  ])(
    'fail the bootstrap of forRoot() for %s, naming it and the closest known name',
    async (_name, options, option, hint) => {
      expectRefusal(await bootstrapError([LockModule.forRoot(options as LockModuleOptions)]), option, hint);
    },
  );

  it('fail the bootstrap of forRootAsync() when its factory returns one, or when forRootAsync itself has one', async () => {
    const fromFactory = LockModule.forRootAsync({ useFactory: () => ({ redis: redis(), keyPrefx: 'app:' }) as never });
    expectRefusal(await bootstrapError([fromFactory]), 'keyPrefx', 'did you mean "keyPrefix"?');
    const isGlobalInFactory = LockModule.forRootAsync({ useFactory: () => ({ isGlobal: true }) as never });
    expectRefusal(
      await bootstrapError([isGlobalInFactory]),
      'isGlobal',
      /option of forRoot\(\) \/ forRootAsync\(\) themselves/,
    );
    expectRefusal(
      await thrownBy(() => LockModule.forRootAsync({ usefactory: () => ({}) } as never)),
      'usefactory',
      'did you mean "useFactory"?',
    );
  });

  it('fail a @WithLock when its class loads', async () => {
    const error = await thrownBy(() => {
      @Injectable()
      class ReportJob {
        @WithLock('report:daily', { onContention: 'skip', holdAtleast: '50s' } as never)
        run(): void {}
      }
      return ReportJob;
    });
    expectRefusal(error, '@WithLock(ReportJob.run).holdAtleast', 'did you mean "holdAtLeast"?');
  });

  describe('per call', () => {
    let locks: LockManager;

    beforeAll(() => {
      locks = new LockManager({ store: new MemoryLockStore() });
    });

    afterAll(() => locks.close());

    it('fail acquire(), tryAcquire() and using() before anything is locked or run', async () => {
      let ran = false;
      const run = () => (ran = true);
      expectRefusal(await thrownBy(() => locks.acquire('k', { wiat: 100 } as never)), 'wiat', 'did you mean "wait"?');
      expectRefusal(await thrownBy(() => locks.using('k', run, { tll: 1000 } as never)), 'tll', 'did you mean "ttl"?');
      expectRefusal(
        await thrownBy(() => locks.tryAcquire('k', { fencin: true } as never)),
        'fencin',
        'did you mean "fencing"?',
      );
      expectRefusal(
        await thrownBy(() => locks.using('k', run, { retry: { maxDelai: 10 } } as never)),
        'retry.maxDelai',
        'did you mean "maxDelay"?',
      );
      expect(ran).toBe(false);
      expect(await locks.isLocked('k')).toBe(false);
    });

    it('say that a @WithLock option means nothing on using(), and wait nothing on tryAcquire()', async () => {
      const run = () => 'ran';
      expectRefusal(
        await thrownBy(() => locks.using('k', run, { onContention: 'skip' } as never)),
        'onContention',
        /no meaning in lock options: it is an option of @WithLock/,
      );
      expectRefusal(
        await thrownBy(() => locks.using('k', run, { holdAtLeast: '50s' } as never)),
        'holdAtLeast',
        /no meaning in lock options/,
      );
      expectRefusal(await thrownBy(() => locks.tryAcquire('k', { wait: '5s' } as never)), 'wait', /never waits/);
    });
  });

  describe('in the store constructors', () => {
    let client: Redis;

    beforeAll(() => {
      client = new Redis(testRedisUrl(), { lazyConnect: true });
    });

    afterAll(() => client.disconnect());

    it('fail RedisLockStore, RedlockStore and LockManager, naming the option', async () => {
      expectRefusal(
        await thrownBy(() => new RedisLockStore({ client, handoffWindo: 10 } as never)),
        'handoffWindo',
        'did you mean "handoffWindow"?',
      );
      expectRefusal(
        await thrownBy(() => new RedisLockStore({ client, replicaAck: { replica: 1, timeout: 50 } } as never)),
        'replicaAck.replica',
        'did you mean "replicas"?',
      );
      expectRefusal(
        await thrownBy(
          () => new RedlockStore({ nodes: ['redis://a', 'redis://b', 'redis://c'], timout: 100 } as never),
        ),
        'timout',
        'did you mean "timeout"?',
      );
      expectRefusal(
        await thrownBy(() => new LockManager({ store: new MemoryLockStore(), autorenew: false } as never)),
        'autorenew',
        'did you mean "autoRenew"?',
      );
    });
  });

  it('leave the option objects of ioredis alone', async () => {
    const { hostname, port } = new URL(redis());
    const ioredisOptions = { host: hostname, port: Number(port), enableAutoPipelining: true, connectionName: 'strict' };
    expect(
      await bootstrapError([LockModule.forRoot({ redis: ioredisOptions, keyPrefix: uniquePrefix() })]),
    ).toBeUndefined();
  });
});

describe('a store option given without a value', () => {
  it.each<[string, LockModuleOptions]>([
    ['redis: undefined', { redis: undefined }],
    ['redis: null', { redis: null as never }],
    ["redis: ''", { redis: '' }],
    ['redlock: undefined', { redlock: undefined }],
    ['store: undefined', { store: undefined }],
  ])('fails the bootstrap for %s instead of falling back to in-process locks', async (_label, options) => {
    const option = Object.keys(options)[0];
    expectRefusal(await bootstrapError([LockModule.forRoot(options)]), option, /unset environment variable/);
  });

  it('fails forRootAsync with redis: config.get(REDIS_URL) when the variable is unset', async () => {
    delete process.env.NESTJS_LOCK_TEST_UNSET_URL;
    const lockModule = LockModule.forRootAsync({
      imports: [SettingsModule],
      inject: [Settings],
      useFactory: (settings: Settings) => ({ redis: settings.get('NESTJS_LOCK_TEST_UNSET_URL') }),
    });
    expectRefusal(await bootstrapError([lockModule]), 'redis', /unset environment variable/);
  });

  it('still lets forRoot() with no store option at all keep locks in this process', async () => {
    const ref = await Test.createTestingModule({ imports: [LockModule.forRoot({ ttl: '5s' })] }).compile();
    expect(ref.get(LockService).store).toBeInstanceOf(MemoryLockStore);
  });
});

describe('bounds that follow from the design', () => {
  it.each<[string, LockModuleOptions, string, RegExp]>([
    ['ttl: 2, inside the drift margin', { ttl: 2 }, 'ttl', /at least 100 ms/],
    [
      'a handoffWindow longer than the lease',
      { ttl: '1s', handoffWindow: 1e9 },
      'handoffWindow',
      /at most half the ttl/,
    ],
    ["keyPrefix: ''", { keyPrefix: '' }, 'keyPrefix', /non-empty/],
    ['a keyPrefix with a new line', { keyPrefix: 'a\nb:' }, 'keyPrefix', /printable/],
    ["keyPrefix: '*'", { keyPrefix: '*' }, 'keyPrefix', /SCAN MATCH/],
  ])('fail the bootstrap for %s, saying why', async (_label, options, option, reason) => {
    expectRefusal(await bootstrapError([LockModule.forRoot(options)]), option, reason);
  });

  it('refuse a RedisLockStore window of 1e9 ms under any manager, and a per-call ttl below twice the window', async () => {
    const client = new Redis(testRedisUrl(), { lazyConnect: true });
    try {
      const huge = new RedisLockStore({ client, handoffWindow: 1e9 });
      expectRefusal(await thrownBy(() => new LockManager({ store: huge })), 'handoffWindow', /at most half the ttl/);
      const manager = new LockManager({ store: new RedisLockStore({ client, handoffWindow: 150 }) });
      expectRefusal(
        await thrownBy(() => manager.using('k', () => 'ran', { ttl: 200 })),
        'ttl',
        /at least twice the store's handoffWindow \(150 ms\)/,
      );
      expectRefusal(await thrownBy(() => manager.acquire('k', { ttl: 2 })), 'ttl', /at least 100 ms/);
      await manager.close();
    } finally {
      client.disconnect();
    }
  });

  it('refuse a @WithLock ttl inside the drift margin when its class loads', async () => {
    const error = await thrownBy(() => {
      class Quick {
        @WithLock('quick', { ttl: 2 })
        run(): void {}
      }
      return Quick;
    });
    expectRefusal(error, '@WithLock(Quick.run).ttl', /at least 100 ms/);
  });
});
