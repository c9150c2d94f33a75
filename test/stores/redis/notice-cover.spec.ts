import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { ReleaseWatch } from '../../../lib/interfaces/lease.interface.js';
import { RedisPermitStore } from '../../../lib/stores/redis/permits/redis-permit-store.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';
import { newToken } from '../../../lib/utils/token.js';
import { startFaultProxy, type FaultProxy } from '../../support/fault-proxy.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';

interface WatchingStore {
  watch(key: string, since?: number, token?: string): Promise<ReleaseWatch>;
  close(): Promise<void>;
}

async function until(condition: () => boolean, what: string, timeout = 10_000): Promise<void> {
  const deadline = performance.now() + timeout;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeout} ms`);
    await sleep(5);
  }
}

/**
 * A waiter told of its turn counts on notices only while its watch says since when none was missed
 * (`listeningSince`): the watch must lose that when the subscriber's connection drops, and get it back once
 * the server has the channels again after the reconnect, or a waiter would ask at its backoff for as long as
 * its key stays busy.
 */
describe.each([
  ['RedisLockStore', (client: Redis) => new RedisLockStore({ client, keyPrefix: uniquePrefix(), ownsClient: true })],
  [
    'RedisPermitStore, a permit waiter',
    (client: Redis) => new RedisPermitStore({ client, keyPrefix: uniquePrefix(), ownsClient: true }),
  ],
] as const)('the release watch of a %s across a reconnect', (_, storeOn) => {
  let proxy: FaultProxy;
  let store: WatchingStore;

  beforeEach(async () => {
    proxy = await startFaultProxy(testRedisUrl());
    const client = new Redis(proxy.url, { commandTimeout: 2000 });
    client.on('error', () => undefined);
    store = storeOn(client);
  });

  afterEach(async () => {
    await store.close();
    await proxy.close();
  });

  it('has no cover while the connection is down, and cover from after the reconnect once it is back', async () => {
    const watch = await store.watch('k', performance.now(), newToken());
    expect(watch.listeningSince).toEqual(expect.any(Number));

    await proxy.refuse(true);
    proxy.cutAll();
    const cut = performance.now();
    await until(() => watch.listeningSince === undefined, 'cover dropped');
    // still none while it cannot reconnect
    await sleep(200);
    expect(watch.listeningSince).toBeUndefined();

    await proxy.refuse(false);
    await until(() => watch.listeningSince !== undefined, 'cover back');
    expect(watch.listeningSince).toBeGreaterThan(cut);
    watch.close();
  });
});
