import type { Cluster, Redis } from 'ioredis';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../../interfaces/lock-module-options.interface.js';
import type { RedisLockStore } from './redis.store.js';
import { createStore } from '../registry.js';
import { checkModuleOptions } from '../../lock.module-options.js';

const build = (options: LockModuleOptions) => createStore(checkModuleOptions(options).store);

describe('createStore with redis: { cluster, options }', () => {
  it('creates a Cluster client it owns, with bounded command timeouts on every node', async () => {
    const created = await build({
      redis: { cluster: [{ host: '127.0.0.1', port: 7000 }], options: { lazyConnect: true } },
    });
    const client = (created.store as RedisLockStore).client as unknown as Cluster;
    expect(created).toMatchObject({ owned: true });
    expect(client.isCluster).toBe(true);
    expect(client.options.redisOptions).toMatchObject({ commandTimeout: 2000, maxRetriesPerRequest: 1 });
    await created.store.close();
    expect(client.status).toBe('end');
  });

  it("keeps the user's own node options over the module's defaults", async () => {
    const created = await build({
      redis: { cluster: [7000], options: { lazyConnect: true, redisOptions: { commandTimeout: 500, password: 'pw' } } },
    });
    const client = (created.store as RedisLockStore).client as unknown as Cluster;
    expect(client.options.redisOptions).toMatchObject({ commandTimeout: 500, password: 'pw', maxRetriesPerRequest: 1 });
    await created.store.close();
  });

  it.each<[string, unknown, string]>([
    ['no startup node', { cluster: [] }, 'redis.cluster'],
    ['startup nodes that are not an array', { cluster: '127.0.0.1:7000' }, 'redis.cluster'],
    ['options that are not an object', { cluster: [7000], options: 5 }, 'redis.options'],
    ['a misspelt field beside the nodes', { cluster: [7000], option: {} }, 'redis.option'],
  ])('refuses %s with LockConfigurationError naming the field, before any client exists', (_label, redis, option) => {
    const error = (() => {
      try {
        checkModuleOptions({ redis: redis as never });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as LockConfigurationError).option).toBe(option);
  });
});

describe('createStore with redis: { sentinels, name }', () => {
  const sentinels = [{ host: '127.0.0.1', port: 26379 }];

  it('creates a Sentinel client it owns that leaves a master as soon as a Sentinel announces a failover', async () => {
    const created = await build({ redis: { sentinels, name: 'locks' } });
    const client = (created.store as RedisLockStore).client as unknown as Redis;
    expect(created).toMatchObject({ owned: true });
    expect(client.options).toMatchObject({ failoverDetector: true, commandTimeout: 2000, maxRetriesPerRequest: 1 });
    await created.store.close();
    expect(client.status).toBe('end');
  });

  it("keeps the user's own choice of failover detector and timeouts", async () => {
    const created = await build({ redis: { sentinels, name: 'locks', failoverDetector: false, commandTimeout: 500 } });
    const client = (created.store as RedisLockStore).client as unknown as Redis;
    expect(client.options).toMatchObject({ failoverDetector: false, commandTimeout: 500 });
    await created.store.close();
  });

  it('leaves the failover detector off for a client that is not a Sentinel client', async () => {
    const created = await build({ redis: { host: '127.0.0.1', port: 1 } });
    expect(((created.store as RedisLockStore).client as unknown as Redis).options.failoverDetector).toBe(false);
    await created.store.close();
  });
});
