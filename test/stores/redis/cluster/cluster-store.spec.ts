import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis, type ClusterOptions } from 'ioredis';
import { LockConfigurationError } from '../../../../lib/errors/lock-configuration.error.js';
import { LockNotAcquiredError } from '../../../../lib/errors/lock-not-acquired.error.js';
import { LockStoreError } from '../../../../lib/errors/lock-store.error.js';
import { LockManager } from '../../../../lib/core/lock-manager.js';
import { RedisLockStore, type RedisLockStoreOptions } from '../../../../lib/stores/redis/redis.store.js';
import { ALL_SCRIPTS } from '../../../../lib/stores/redis/scripts/index.js';
import { keySlot as libKeySlot } from '../../../../lib/utils/key-slot.js';
import { resourceKeys } from '../../../../lib/stores/redis/resource-keys.js';
import { newToken } from '../../../../lib/utils/token.js';
import { ADVERSARIAL_KEYS } from '../../../contract/lock-store.contract.js';
import { freePort } from '../../../support/redis-server.js';
import { keySlot, startRedisCluster, type RedisClusterHandle } from '../../../support/redis-cluster.js';
import { testRedisUrl, uniquePrefix } from '../../../support/stores.js';
import { storedToken } from '../../../support/stored-token.js';
import { channelListeners } from '../../../support/channel-listeners.js';
import { subscriberIds } from '../../../support/connection-ids.js';

describe('RedisLockStore on a Redis Cluster (3 masters, 3 replicas)', () => {
  let cluster: RedisClusterHandle;
  let keyPrefix: string;
  const cleanups: Array<() => unknown> = [];

  const connectCluster = (options: ClusterOptions = {}): Cluster => {
    // no slotsRefreshInterval: ioredis 6 leaves its timer running after disconnect()
    const client = new Cluster(cluster.startupNodes, {
      ...options,
      redisOptions: { commandTimeout: 2000, maxRetriesPerRequest: 1, ...options.redisOptions },
    });
    client.on('error', () => undefined);
    cleanups.push(() => (client.status === 'end' ? undefined : client.quit().catch(() => client.disconnect())));
    return client;
  };
  const direct = (port: number): Redis => {
    const client = new Redis(port, '127.0.0.1');
    client.on('error', () => undefined);
    cleanups.push(() => client.quit().catch(() => client.disconnect()));
    return client;
  };
  const store = (options: Partial<RedisLockStoreOptions> = {}): RedisLockStore => {
    const created = new RedisLockStore({ client: connectCluster(), keyPrefix, ownsClient: true, ...options });
    cleanups.push(() => created.close());
    return created;
  };
  const manager = (lockStore = store()): LockManager => {
    const created = new LockManager({ store: lockStore });
    cleanups.push(() => created.close());
    return created;
  };
  const names = (key: string) => resourceKeys(keyPrefix, key);
  const masters = (): number[] => cluster.nodes.filter((node) => node.role === 'master').map((node) => node.port);
  /** One resource key per master, so a test touches every shard. */
  const keyPerMaster = async (stem: string): Promise<Map<number, string>> => {
    const found = new Map<number, string>();
    for (let i = 0; found.size < masters().length; i++) {
      const master = await cluster.masterForKey(names(`${stem}:${i}`).lock);
      if (!found.has(master)) found.set(master, `${stem}:${i}`);
    }
    return found;
  };

  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  beforeEach(() => {
    keyPrefix = uniquePrefix();
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it.each(ADVERSARIAL_KEYS.map((key) => [JSON.stringify(key).slice(0, 24), key]))(
    'keeps the lock, fence and channel of %s on one slot (CLUSTER KEYSLOT), written and announced by its master',
    async (_label, key) => {
      const { lock, fence, channel } = names(key);
      const admin = direct(masters()[0]);
      const slots = await Promise.all([lock, fence, channel].map((name) => admin.call('CLUSTER', 'KEYSLOT', name)));
      expect(new Set(slots).size).toBe(1);
      expect(libKeySlot(lock)).toBe(slots[0]);

      const owner = direct(await cluster.masterForSlot(slots[0] as number));
      const listener = direct(await cluster.masterForSlot(slots[0] as number));
      const heard = new Promise<string>((resolve) => listener.on('smessage', (name: string) => resolve(name)));
      await listener.ssubscribe(channel);
      const lockStore = store();
      const token = newToken();
      const granted = await lockStore.acquire({ key, token, ttl: 10_000, fencing: true });
      expect(granted).toEqual({ acquired: true, fence: expect.any(Number) });
      expect(storedToken(await owner.get(lock))).toBe(token);
      expect(await owner.get(fence)).toBe(String(granted.acquired && granted.fence));
      // a waiter elsewhere marks the lease, so that its release sends a notice
      const waiting = { again: false, ttl: 10_000 };
      expect((await store().acquire({ key, token: newToken(), ttl: 10_000, fencing: false, waiting })).acquired).toBe(
        false,
      );
      expect(await lockStore.release(key, token)).toBe(true);
      await expect(heard).resolves.toBe(channel);
    },
  );

  it('wakes a waiter on every master by a sharded notice, long before its 5 s backoff', async () => {
    const keys = [...(await keyPerMaster('handoff')).values()];
    const holder = manager();
    const waiter = manager();
    for (const key of keys) {
      const lock = await holder.acquire(key, { ttl: 30_000 });
      const waiting = waiter.acquire(key, { wait: 10_000, retry: { minDelay: 5000, maxDelay: 5000 } });
      // the waiter's subscriber listens on the master of the key's slot, and only there
      const owner = await cluster.masterForKey(names(key).lock);
      for (let count = 0; count === 0;) {
        count = await channelListeners(direct(owner), names(key).channel, true);
      }
      const released = performance.now();
      await lock.release();
      const next = await waiting;
      expect(performance.now() - released).toBeLessThan(1000);
      await next.release();
    }
  });

  it('wakes a waiter soon when its sharded subscriber is cut just as the release would tell it', async () => {
    const key = 'handoff:cut';
    const holder = await manager().acquire(key, { ttl: 30_000 });
    // it would sleep 2.5 to 5 s on its own: anything sooner is the replaced subscriber's doing
    const waiting = manager().acquire(key, { wait: 15_000, retry: { minDelay: 5000, maxDelay: 5000 } });
    const owner = direct(await cluster.masterForKey(names(key).lock));
    while ((await channelListeners(owner, names(key).channel, true)) === 0) await sleep(5);
    const subscribers = await subscriberIds(owner, { sharded: true });
    expect(subscribers).toHaveLength(1);
    await owner.client('KILL', 'ID', subscribers[0]);
    // released while nobody listens on the channel: the notice is lost
    const released = performance.now();
    await holder.release();
    const next = await waiting;
    expect(performance.now() - released).toBeLessThan(2000);
    await next.release();
  });

  it('takes the keys of a multi-key lock in one order everywhere: opposite-order users on two masters never deadlock', async () => {
    const [a, b] = [...(await keyPerMaster('pair')).values()];
    expect(await cluster.masterForKey(names(a).lock)).not.toBe(await cluster.masterForKey(names(b).lock));
    const first = manager();
    const second = manager();
    let inside = 0;
    let overlaps = 0;
    const run = async (locks: LockManager, keys: string[]) => {
      for (let i = 0; i < 25; i++) {
        await locks.using(
          keys,
          async () => {
            if (++inside > 1) overlaps++;
            await new Promise((resolve) => setTimeout(resolve, 2));
            inside--;
          },
          { wait: 10_000, ttl: 5000 },
        );
      }
    };
    const started = performance.now();
    await Promise.all([run(first, [a, b]), run(second, [b, a])]);
    expect(overlaps).toBe(0);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('takes none of the keys when one on another master stays held past the wait', async () => {
    const [free, busy] = [...(await keyPerMaster('all-or-none')).values()].sort();
    const holder = manager();
    const held = await holder.acquire(busy, { ttl: 10_000 });
    const error = await manager()
      .using([busy, free], () => 'ran', { wait: 200 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect((error as LockNotAcquiredError).key).toBe(busy);
    // the sorted order took `free` first; it was given back
    expect((await store().inspect(free)).held).toBe(false);
    await held.release();
  });

  it('verify() answers PING and loads every script on every master', async () => {
    for (const port of masters()) await direct(port).script('FLUSH');
    await store().verify();
    for (const port of masters()) {
      expect(await direct(port).script('EXISTS', ...ALL_SCRIPTS.map((script) => script.sha))).toEqual(
        ALL_SCRIPTS.map(() => 1),
      );
    }
  });

  it('verify() names the master whose user may not run scripts', async () => {
    const [refusing] = masters();
    const nodes = cluster.nodes.map((node) => ({ port: node.port, admin: direct(node.port) }));
    for (const { port, admin } of nodes) {
      const rights = port === refusing ? ['+@all', '-@scripting'] : ['+@all'];
      await admin.call('ACL', 'SETUSER', 'locks', 'on', '>pw', '~*', 'allchannels', ...rights);
    }
    cleanups.push(() => Promise.all(nodes.map(({ admin }) => admin.call('ACL', 'DELUSER', 'locks'))));
    const client = connectCluster({ redisOptions: { username: 'locks', password: 'pw' } });
    const error = await new RedisLockStore({ client, keyPrefix }).verify().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(
      new RegExp(`may not run scripts on master 127\\.0\\.0\\.1:${refusing} \\(NOPERM.*\\+@scripting`),
    );
  });

  it('verify() names the master that may evict leases, with its policy, and warns instead under acceptEvictionRisk', async () => {
    const evicting = masters()[1];
    const admin = direct(evicting);
    await admin.config('SET', 'maxmemory', String(512 * 1024 * 1024));
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    cleanups.push(() => admin.config('SET', 'maxmemory', '0'));
    const error = await store()
      .verify()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as Error).message).toContain(`allkeys-lru on master 127.0.0.1:${evicting}`);
    for (const port of masters().filter((port) => port !== evicting)) {
      expect((error as Error).message).not.toContain(`:${port}`);
    }
    expect(await store({ acceptEvictionRisk: true }).verify()).toEqual({
      warnings: [expect.stringContaining(`master 127.0.0.1:${evicting} has maxmemory 536870912 bytes`)],
    });
  });

  it('verify() fails with LockStoreError instead of hanging when no startup node answers', async () => {
    const client = new Cluster([{ host: '127.0.0.1', port: await freePort() }], {
      clusterRetryStrategy: () => null,
      // ioredis disconnects the failed node itself and waits this long for a socket that never opened
      redisOptions: { disconnectTimeout: 10 },
    });
    client.on('error', () => undefined);
    const started = performance.now();
    const error = await new RedisLockStore({ client }).verify().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/Redis Cluster unreachable/);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('verify() gives up after 10 s, saying why, when the Cluster client points at a server without cluster mode', async () => {
    const client = new Cluster([{ host: '127.0.0.1', port: Number(new URL(testRedisUrl()).port) }], {
      redisOptions: { disconnectTimeout: 10 },
    });
    client.on('error', () => undefined);
    cleanups.push(() => client.disconnect());
    const started = performance.now();
    const error = await new RedisLockStore({ client }).verify().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(
      /Redis Cluster unreachable: not ready within 10000 ms \(status \w+; last error: .+ \(ERR This instance has cluster support disabled\)\)$/,
    );
    expect(performance.now() - started).toBeLessThan(12_000);
  }, 20_000);

  it('computes the slot of every adversarial resource key as the server does', async () => {
    const admin = direct(masters()[0]);
    for (const key of [...ADVERSARIAL_KEYS, 'foo{}{bar}', 'foo{{bar}}zap']) {
      expect(libKeySlot(key)).toBe(await admin.call('CLUSTER', 'KEYSLOT', key));
      expect(libKeySlot(names(key).lock)).toBe(keySlot(names(key).lock));
    }
  });
});
