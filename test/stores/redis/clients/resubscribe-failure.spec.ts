import { Redis } from 'ioredis';
import { Redis as Valkey } from 'iovalkey';
import { closeClient } from '../../../../lib/stores/redis/close-client.js';
import type { RedisClientPort } from '../../../../lib/stores/redis/client/redis-client-port.js';
import { toClientPort } from '../../../../lib/stores/redis/client/client-port.js';
import { subscriberClient } from '../../../../lib/stores/redis/cluster-client.js';
import { ReleaseSubscriber } from '../../../../lib/stores/redis/release-subscriber.js';
import type { SubscriberPort } from '../../../../lib/stores/redis/slot-routed-subscriber.js';
import { startFaultProxy, type FaultProxy } from '../../../support/fault-proxy.js';
import { startRedisServer, type RedisServerHandle } from '../../../support/redis-server.js';

/**
 * ioredis (5, 6.0) and iovalkey re-subscribe a subscriber's channels after a reconnect and keep no handler on
 * that SUBSCRIBE: if the connection closes before the server answers it, its rejection is unhandled, which
 * ends a Node process by default. The store's subscriber connection must not let that happen.
 */
describe.each([
  ['ioredis', (url: string) => new Redis(url, { commandTimeout: 2000 })],
  // the store's bounded view of a client without a command timeout (bounded-ioredis-port.ts)
  ['ioredis without commandTimeout', (url: string) => new Redis(url)],
  ['iovalkey', (url: string) => new Valkey(url, { commandTimeout: 2000 }) as unknown as Redis],
])('the release subscriber of a store on an %s client', (_, connect) => {
  let server: RedisServerHandle;
  let proxy: FaultProxy;
  let client: Redis;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };

  beforeAll(async () => {
    server = await startRedisServer();
  });

  afterAll(() => server.stop());

  beforeEach(async () => {
    proxy = await startFaultProxy(server.url);
    client = connect(proxy.url);
    client.on('error', () => undefined);
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });

  afterEach(async () => {
    process.off('unhandledRejection', onUnhandled);
    await closeClient(client as unknown as RedisClientPort);
    await proxy.close();
  });

  it('closes without an unhandled rejection while its re-subscription after a reconnect is unanswered', async () => {
    let connection: SubscriberPort | undefined;
    const subscriber = new ReleaseSubscriber(() => (connection = subscriberClient(toClientPort(client, 'client'))));
    const watch = await subscriber.watch('nestjs-lock:test:resubscribe');
    // the reconnect's 'ready' comes in the tick after ioredis wrote the SUBSCRIBE, before the proxy read it
    const resubscribing = new Promise<void>((resolve) => {
      let cut = false;
      connection!.on('ready', () => {
        if (cut) return;
        cut = true;
        proxy.blackhole();
        resolve();
      });
    });
    proxy.cutAll();
    await resubscribing;
    watch.close();
    // ioredis rejects what the connection left unanswered when it ends; Node reports an unhandled rejection
    // once the microtasks of that turn have run
    const ended = new Promise<void>((resolve) => connection!.on('end', () => resolve()));
    await subscriber.close();
    // the closing socket gets no answer through the partition: cut it, so that the client sees it closed
    proxy.cutAll();
    await ended;
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
  });
});
