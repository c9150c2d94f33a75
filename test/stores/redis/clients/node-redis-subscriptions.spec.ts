import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { NodeRedisPort } from '../../../../lib/stores/redis/client/node-redis-port.js';
import { RedisLockStore } from '../../../../lib/stores/redis/redis.store.js';
import { nodeRedisClient, type NodeRedisClient } from '../../../support/client-stores.js';
import { subscriberIds } from '../../../support/connection-ids.js';
import { testRedisUrl, uniquePrefix } from '../../../support/stores.js';

/**
 * The store's subscriber asks the server for its channels again after a reconnect, to learn when its notices
 * are heard again (ReleaseSubscriber). node-redis keeps each channel's listeners in a set: the port must give
 * it the same listener each time, or every notice would be heard twice (and a second "granted" notice can give
 * back a grant its waiter is taking).
 */
describe.each([6, 5] as const)('the node-redis %i port subscribing a channel it already has', (major) => {
  let client: NodeRedisClient;
  let subscriber: ReturnType<NodeRedisPort['duplicate']>;
  let publisher: Redis;

  beforeEach(() => {
    client = nodeRedisClient(major, testRedisUrl());
    subscriber = new NodeRedisPort(client as never).duplicate();
    publisher = new Redis(testRedisUrl());
  });

  afterEach(async () => {
    subscriber.disconnect();
    if (client.isOpen) await client.close();
    await publisher.quit();
  });

  it.each(['subscribe', 'ssubscribe'] as const)('hears each message once (%s)', async (method) => {
    const channel = `${uniquePrefix()}:released`;
    const heard: string[] = [];
    subscriber.on(method === 'subscribe' ? 'message' : 'smessage', (_from: unknown, message: unknown) =>
      heard.push(String(message)),
    );
    await subscriber[method](channel);
    await subscriber[method](channel);
    await publisher.call(method === 'subscribe' ? 'PUBLISH' : 'SPUBLISH', channel, 'one');
    await publisher.call(method === 'subscribe' ? 'PUBLISH' : 'SPUBLISH', channel, 'two');
    for (let waited = 0; heard.length < 2 && waited < 5000; waited += 10) await sleep(10);
    // a duplicate would come right behind its original, on the same connection
    await sleep(50);
    expect(heard).toEqual(['one', 'two']);
  });
});

/**
 * A node-redis client made with `reconnectStrategy: false` gives up at the first drop: 6 then says `terminated`
 * (and `error`), neither `reconnecting` nor `end`. The watch must lose its cover then, or a waiter told of its
 * turn would sleep to `retry.maxDelay` on a connection that hears nothing any more.
 */
describe.each([6, 5] as const)('a node-redis %i client that does not reconnect', (major) => {
  it('drops the cover of its release watches when its connection goes', async () => {
    const name = `no-reconnect-${uniquePrefix()}`;
    const client = nodeRedisClient(major, testRedisUrl(), undefined, name, { reconnectStrategy: false });
    const store = new RedisLockStore({ client: client as never, keyPrefix: uniquePrefix() });
    const admin = new Redis(testRedisUrl());
    try {
      const watch = await store.watch('k', performance.now());
      expect(watch.listeningSince).toEqual(expect.any(Number));
      const subscribers = await subscriberIds(admin, { name });
      expect(subscribers).toHaveLength(1);
      await admin.client('KILL', 'ID', subscribers[0]);
      for (let waited = 0; watch.listeningSince !== undefined && waited < 5000; waited += 10) await sleep(10);
      expect(watch.listeningSince).toBeUndefined();
      watch.close();
    } finally {
      await store.close();
      if (client.isOpen) await client.close();
      await admin.quit();
    }
  });
});
