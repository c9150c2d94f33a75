import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis, type RedisOptions } from 'ioredis';
import { LockManager } from '../../../lib/core/lock-manager.js';
import type { LockOptions } from '../../../lib/interfaces/lock-options.interface.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../../lib/stores/redis/resource-keys.js';
import { channelListeners } from '../../support/channel-listeners.js';
import { nodeRedisClient, type NodeRedisClient } from '../../support/client-stores.js';
import { commandsDuring } from '../../support/command-counts.js';
import { storedToken } from '../../support/stored-token.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';

const KEY = 'told';

/**
 * A waiter whose request stands beside its process's place in the line, and whose process hears every notice,
 * is told when a release grants it the key: it sends nothing while it waits, and asks again only where no
 * notice can reach it (a dropped subscription, a place lost unheard, a holder that crashed, its deadline).
 */
describe('a waiter told of its turn by the line', () => {
  let prefix: string;
  let admin: Redis;
  const managers: LockManager[] = [];

  beforeEach(() => {
    prefix = uniquePrefix();
    admin = new Redis(testRedisUrl());
  });

  const userClients: NodeRedisClient[] = [];

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((manager) => manager.close()));
    await Promise.all(userClients.splice(0).map((client) => (client.isOpen ? client.close() : undefined)));
    await admin.quit();
  });

  const names = () => resourceKeys(prefix, KEY);

  function store(connectionName?: string, options: RedisOptions = {}): RedisLockStore {
    const client = new Redis(testRedisUrl(), {
      ...options,
      ...(connectionName === undefined ? {} : { connectionName }),
    });
    return new RedisLockStore({ client, keyPrefix: prefix, ownsClient: true });
  }

  /** A store on a node-redis client of `major` named `connectionName` (its subscriber, a duplicate, is too). */
  function nodeRedisStore(major: 5 | 6, connectionName: string): RedisLockStore {
    const client = nodeRedisClient(major, testRedisUrl(), undefined, connectionName);
    userClients.push(client);
    return new RedisLockStore({ client: client as never, keyPrefix: prefix });
  }

  /** Cuts the subscriber connection of the store whose connections are named `connectionName`. */
  async function killSubscriber(connectionName: string): Promise<void> {
    const list = (await admin.client('LIST')) as string;
    const subscribed = list
      .split('\n')
      .filter((line) => line.includes(` name=${connectionName} `) && / (sub|ssub)=[1-9]/.test(line))
      .map((line) => /id=(\d+)/.exec(line)![1]);
    expect(subscribed).toHaveLength(1);
    await admin.client('KILL', 'ID', subscribed[0]);
  }

  function manager(lockStore = store()): LockManager {
    const created = new LockManager({ store: lockStore });
    managers.push(created);
    return created;
  }

  async function until(condition: () => Promise<boolean> | boolean, timeout = 10_000): Promise<void> {
    const deadline = performance.now() + timeout;
    while (!(await condition())) {
      if (performance.now() > deadline) throw new Error(`condition not met within ${timeout} ms`);
      await sleep(5);
    }
  }

  /** A waiter on a store whose requests are noted (when each was sent), and the attempts its grant took. */
  function waiter(options: LockOptions, lockStore = store()) {
    const asked: number[] = [];
    const answered: number[] = [];
    const ask = lockStore.acquire.bind(lockStore);
    lockStore.acquire = async (request) => {
      asked.push(performance.now());
      const reply = await ask(request);
      answered.push(performance.now());
      return reply;
    };
    const locks = manager(lockStore);
    const attempts: number[] = [];
    locks.on('acquired', (event) => attempts.push(event.attempts));
    const lock = locks.acquire(KEY, { wait: 10_000, ttl: 30_000, ...options }).then((held) => ({
      held,
      at: performance.now(),
    }));
    // a test that fails before it takes the lock closes the manager under it: no unhandled rejection
    lock.catch(() => undefined);
    return { lock, asked, answered, attempts };
  }

  /** Resolves once the waiter's request stands in the line and its process listens on its own channel. */
  async function told(waiting: { answered: number[] }): Promise<void> {
    await until(async () => (await admin.lrange(names().line, 0, -1)).some((entry) => entry.includes(' ')));
    await until(async () => (await channelListeners(admin, names().channel)) > 0);
    // its first request went before its subscription: the one after closes that gap, then it is told
    await until(() => waiting.answered.length >= 2);
  }

  it('sends no request while it stands first in line, and starts on the release that grants it', async () => {
    const first = await manager().acquire(KEY, { ttl: 30_000 });
    // polling, it would ask after 25-50 ms, then 50-100, 100-200 and 200-400 ms; told, it asks after 2.5 to 5 s
    const waiting = waiter({ retry: { minDelay: 50, maxDelay: 5000 } });
    await told(waiting);
    const before = waiting.asked.length;
    // nothing reaches the server meanwhile (this worker's redis-server serves this file alone)
    expect(await commandsDuring(admin, () => sleep(800))).toEqual({});
    expect(waiting.asked.length).toBe(before);

    const released = performance.now();
    await first.release();
    const { held, at } = await waiting.lock;
    expect(at - released).toBeLessThan(500);
    // granted by the release, to its request in the line: no request of its own since
    expect(waiting.asked.length).toBe(before);
    expect(waiting.attempts[0]).toBe(before);
    expect(storedToken(await admin.get(names().lock))).toBe(held.token);
    await held.release();
  });

  it("asks again at its holder's lease end when the holder crashed, long before retry.maxDelay", async () => {
    const crashed = store();
    // a holder that never releases or renews: its lease ends by its ttl alone, with no notice
    const granted = performance.now();
    await crashed.acquire({ key: KEY, token: 'c'.repeat(32), ttl: 1000, fencing: false });
    const waiting = waiter({ retry: { minDelay: 5000, maxDelay: 5000 } });
    const { held, at } = await waiting.lock;
    expect(at - granted).toBeGreaterThan(900);
    expect(at - granted).toBeLessThan(2000);
    await held.release();
    await crashed.close();
  });

  it('gets the key soon when its subscriber connection is cut just as the release grants it', async () => {
    const first = await manager().acquire(KEY, { ttl: 30_000 });
    const name = `told-${prefix.replace(/\W/g, '')}`;
    // it would sleep 2.5 to 5 s on its own: anything sooner is the reconnect's doing
    const waiting = waiter({ retry: { minDelay: 5000, maxDelay: 5000 } }, store(name));
    await told(waiting);
    await killSubscriber(name);
    // released while nobody listens on the waiter's channel: the notice (and the grant, undone) is lost
    const released = performance.now();
    await first.release();
    const { held, at } = await waiting.lock;
    expect(at - released).toBeLessThan(2000);
    expect(waiting.attempts[0]).toBeGreaterThanOrEqual(3);
    await held.release();
  });

  it.each(['ioredis', 'ioredis without autoResubscribe', 'node-redis 6', 'node-redis 5'] as const)(
    'is told again once its subscriber has reconnected, and sends nothing meanwhile (%s)',
    async (client) => {
      const first = await manager().acquire(KEY, { ttl: 30_000 });
      const name = `told-${prefix.replace(/\W/g, '')}`;
      const lockStore = client.startsWith('ioredis')
        ? store(name, { autoResubscribe: client === 'ioredis' })
        : nodeRedisStore(client === 'node-redis 6' ? 6 : 5, name);
      // asking at its backoff, it would send a request every 50 to 100 ms; told, it sleeps 5 to 10 s
      const waiting = waiter({ wait: 25_000, retry: { minDelay: 100, maxDelay: 10_000, factor: 1 } }, lockStore);
      await told(waiting);
      const before = waiting.asked.length;
      await killSubscriber(name);
      // the reconnect wakes it (notices may have been lost meanwhile): it asks again ...
      await until(() => waiting.asked.length > before);
      // ... and once the server has its channels again, it counts on being told: a second of silence
      await until(() => performance.now() - waiting.asked[waiting.asked.length - 1] > 1000, 15_000);
      const quiet = waiting.asked.length;
      expect(await commandsDuring(admin, () => sleep(300))).toEqual({});

      const released = performance.now();
      await first.release();
      const { held, at } = await waiting.lock;
      expect(at - released).toBeLessThan(2000);
      // granted by the release, to its request in the line, and told so by a notice
      expect(waiting.asked.length).toBe(quiet);
      await held.release();
    },
  );

  it('asks again within retry.maxDelay when its place in the line was lost unheard', async () => {
    const first = await manager().acquire(KEY, { ttl: 30_000 });
    const waiting = waiter({ retry: { minDelay: 50, maxDelay: 400 } });
    await told(waiting);
    const before = waiting.asked.length;
    // as if the line had expired: the release finds nobody in it and tells no process
    await admin.del(names().line);
    const released = performance.now();
    await first.release();
    const { held, at } = await waiting.lock;
    expect(at - released).toBeLessThan(1000);
    // found by a request of its own, not by a notice
    expect(waiting.asked.length).toBeGreaterThan(before);
    await held.release();
  });
});
