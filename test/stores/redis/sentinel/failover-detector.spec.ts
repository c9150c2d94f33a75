import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockStoreError } from '../../../../lib/errors/lock-store.error.js';
import { LockManager } from '../../../../lib/core/lock-manager.js';
import type { LockStore } from '../../../../lib/interfaces/lock-store.interface.js';
import { createStore } from '../../../../lib/stores/registry.js';
import { unboundedClient } from '../../../../lib/stores/redis/client/bounded-ioredis-port.js';
import type { RedisClientPort } from '../../../../lib/stores/redis/client/redis-client-port.js';
import { checkModuleOptions } from '../../../../lib/lock.module-options.js';
import { startFaultProxy, type FaultProxy } from '../../../support/fault-proxy.js';
import { startRedisSentinel, type RedisSentinelHandle } from '../../../support/redis-sentinel.js';
import { uniquePrefix } from '../../../support/stores.js';

/** Long enough for the holder's validity to outlast the failover, so only the store can tell it. */
const TTL = 9000;

describe('a Sentinel client the module creates, when the master freezes', () => {
  let group: RedisSentinelHandle;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeEach(async () => {
    group = await startRedisSentinel();
  }, 60_000);

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await group?.stop();
  });

  /** A store the module would create from `redis: { sentinels, name }`. */
  const sentinelStore = async (keyPrefix: string): Promise<LockStore> =>
    (await createStore(checkModuleOptions({ redis: group.clientOptions, keyPrefix }).store)).store;
  const manager = async (keyPrefix: string): Promise<LockManager> => {
    const created = new LockManager({ store: await sentinelStore(keyPrefix) });
    cleanups.push(() => created.close());
    return created;
  };

  it('follows the failover, so a rival on the new master is refused or the holder is told, never two holders unannounced', async () => {
    const keyPrefix = uniquePrefix();
    const lock = await (await manager(keyPrefix)).acquire('job', { ttl: TTL, autoRenew: true });
    const master = await group.master();
    // frozen, not dead: its connections stay open, and it answers again as a master once it runs
    master.process.pause();
    const frozenAt = performance.now();
    cleanups.push(async () => master.process.resume());
    await group.waitForFailover(master);
    master.process.resume();

    // another process that connects now finds the new master, and tries for the key until well after the
    // lease the holder renewed before the freeze would have run out there
    const rival = await manager(keyPrefix);
    const twoHolders: string[] = [];
    let answers = 0;
    const until = Math.max(frozenAt + TTL + 2000, performance.now() + 2000);
    while (performance.now() < until) {
      const taken = await rival.tryAcquire('job', { ttl: 1000 }).catch((error: unknown) => {
        if (error instanceof LockStoreError) return undefined;
        throw error;
      });
      if (taken !== undefined) answers++;
      if (taken) {
        if (lock.isHeld && !lock.signal.aborted) {
          twoHolders.push(`${Math.round(performance.now() - frozenAt)} ms after the freeze`);
        }
        await taken.release().catch(() => undefined);
      }
      await delay(50);
    }
    expect(twoHolders).toEqual([]);
    // the rival did reach the new master: it was refused, or granted once the holder had been told
    expect(answers).toBeGreaterThan(0);
  }, 90_000);

  it("closes the failover detector's connections to the Sentinels with the store, so nothing keeps the process alive", async () => {
    const subscribers = async (): Promise<number[]> =>
      Promise.all(
        group.sentinels.map(async (sentinel) => {
          const admin = new Redis({ host: '127.0.0.1', port: sentinel.port, lazyConnect: true });
          try {
            return String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
              .split('\n')
              .filter(Boolean).length;
          } finally {
            admin.disconnect();
          }
        }),
      );
    const until = async (expected: number): Promise<void> => {
      const deadline = performance.now() + 5000;
      while ((await subscribers()).some((count) => count !== expected) && performance.now() < deadline) {
        await delay(50);
      }
    };
    const store = await sentinelStore(uniquePrefix());
    cleanups.push(() => store.close());
    await store.inspect('job');
    // the detector subscribes to every Sentinel once the client is connected
    await until(1);
    expect(await subscribers()).toEqual([1, 1, 1]);

    await store.close();
    await until(0);
    expect(await subscribers()).toEqual([0, 0, 0]);
  });

  it("closes without an unhandled rejection while the detector's re-subscription to a Sentinel is unanswered", async () => {
    // ioredis (5, 6.0) re-subscribes a detector connection to +switch-master after a reconnect with no handler:
    // if the connection closes before the Sentinel answers, Node ends the process by default
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    cleanups.push(async () => process.off('unhandledRejection', onUnhandled));
    const proxies: FaultProxy[] = [];
    for (const sentinel of group.sentinels) {
      const proxy = await startFaultProxy({ port: sentinel.port });
      cleanups.push(() => proxy.close());
      proxies.push(proxy);
    }
    const redis = {
      ...group.clientOptions,
      sentinels: proxies.map(({ host, port }) => ({ host, port })),
      // only the Sentinels behind the proxies, each reconnected soon after a drop (ioredis' default: 1 minute)
      updateSentinels: false,
      sentinelReconnectStrategy: () => 20,
    };
    const { store } = await createStore(checkModuleOptions({ redis, keyPrefix: uniquePrefix() }).store);
    cleanups.push(() => store.close());
    // a waiter's watch: the store's subscriber, a duplicate of the client, has a failover detector of its own
    await store.inspect('job');
    const watch = await store.watch('job');
    const subscriber = (store as unknown as { subscriber: { connection: RedisClientPort } }).subscriber.connection;
    const clients = [(store as unknown as { client: RedisClientPort }).client, unboundedClient(subscriber)];
    const detectors = () => clients.map((client) => (client as unknown as DetectingClient).connector.failoverDetector);
    while (detectors().some((detector) => !detector)) await delay(10);
    const sentinels = detectors().flatMap((detector) => detector!.sentinels);
    while (sentinels.some(({ client }) => client.status !== 'ready')) await delay(10);
    // every answer through the proxies comes 400 ms late from now on: each connection's re-subscription, sent
    // at its reconnect's 'ready' (after its HELLO came back), is still unanswered for that long
    const resubscribing = sentinels.map(({ client }) => new Promise<void>((resolve) => client.once('ready', resolve)));
    for (const proxy of proxies) {
      proxy.latency(200);
      proxy.cutAll();
    }
    await Promise.all(resubscribing);
    const ended = sentinels.map(({ client }) => new Promise<void>((resolve) => client.once('end', () => resolve())));
    watch.close();
    await store.close();
    // the closing sockets' ends come late through the proxies: cut them, so that the clients see them closed
    for (const proxy of proxies) proxy.cutAll();
    await Promise.all(ended);
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
  });
});

/** The part of an ioredis Sentinel client (internal) the test reaches into: its detector's Sentinel connections. */
interface DetectingClient {
  readonly connector: {
    readonly failoverDetector: null | {
      readonly sentinels: ReadonlyArray<{ readonly client: Redis; readonly address: { readonly port: number } }>;
    };
  };
}
