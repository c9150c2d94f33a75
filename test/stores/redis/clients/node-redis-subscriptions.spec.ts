import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { NodeRedisPort } from '../../../../lib/stores/redis/client/node-redis-port.js';
import { nodeRedisClient, type NodeRedisClient } from '../../../support/client-stores.js';
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
