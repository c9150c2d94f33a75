import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis as Valkey } from 'iovalkey';
import { Redis } from 'ioredis';
import { LockService } from '../../../../lib/index.js';
import { LockConfigurationError } from '../../../../lib/errors/lock-configuration.error.js';
import { RedlockStore } from '../../../../lib/stores/redlock/redlock.store.js';
import { expectRedlockWaiterWokenByNotice } from '../../../support/redlock-notice-wake.js';
import { startChild, type ChildHandle } from '../../../support/child-process.js';
import { connectionIds } from '../../../support/connection-ids.js';
import { bootLockApp } from '../../../support/lock-app.js';
import { nodeRedisClient, type NodeRedisClient } from '../../../support/client-stores.js';
import { RedisServerPool, testRedisUrl, uniquePrefix } from '../../../support/stores.js';

const WORKER = fileURLToPath(new URL('./mixed-worker.child.ts', import.meta.url));

describe('a Redis client of your own', () => {
  const opened: NodeRedisClient[] = [];
  let admin: Redis;

  beforeAll(() => {
    admin = new Redis(testRedisUrl());
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((client) => (client.isOpen ? client.close() : undefined)));
  });

  afterAll(() => admin.quit());

  it.each([6, 5] as const)(
    'connects an unconnected node-redis %i client, and leaves it connected and usable after app.close()',
    async (major) => {
      const client = nodeRedisClient(major, testRedisUrl());
      opened.push(client);
      const keyPrefix = uniquePrefix();
      const app = await bootLockApp({ redis: client as never, keyPrefix });
      const lock = await app.get(LockService).acquire('mine');
      expect(await admin.exists(`${keyPrefix}{mine}`)).toBe(1);
      expect(await lock.release()).toBe(true);
      await app.close();
      expect(client.isOpen).toBe(true);
      expect(await client.sendCommand(['PING'])).toBe('PONG');
      expect(await admin.exists(`${keyPrefix}{mine}`)).toBe(0);
    },
  );

  it('runs on an iovalkey client and leaves it open after app.close()', async () => {
    const client = new Valkey(testRedisUrl());
    try {
      const app = await bootLockApp({ redis: client as never, keyPrefix: uniquePrefix() });
      const locks = app.get(LockService);
      const lock = await locks.acquire('valkey');
      await expect(locks.tryAcquire('valkey')).resolves.toBeNull();
      await lock.release();
      await app.close();
      expect(client.status).toBe('ready');
    } finally {
      await client.quit();
    }
  });

  it('refuses a client of unknown shape at bootstrap, naming the option', async () => {
    class HomeMadeClient {
      send(): void {}
    }
    await expect(bootLockApp({ redis: new HomeMadeClient() as never })).rejects.toThrow(
      /"redis".*a client of unknown shape/,
    );
    class GlideLike {
      customCommand(): void {}
    }
    await expect(bootLockApp({ redis: new GlideLike() as never })).rejects.toThrow(LockConfigurationError);
    const url = testRedisUrl();
    await expect(bootLockApp({ redlock: { nodes: [url, new HomeMadeClient() as never, url] } })).rejects.toThrow(
      /"redlock\.nodes\[1\]".*unknown shape/,
    );
  });

  it('keeps a held lease renewed through a CLIENT KILL of its node-redis connection', async () => {
    const name = `holder${process.pid}`;
    const named = (await import('redis')).createClient({ url: testRedisUrl(), name }).on('error', () => undefined);
    opened.push(named as unknown as NodeRedisClient);
    const keyPrefix = uniquePrefix();
    const app = await bootLockApp({ redis: named as never, keyPrefix });
    try {
      const locks = app.get(LockService);
      const lock = await locks.acquire('killed', { ttl: 2000, autoRenew: true });
      for (const id of await connectionIds(admin, name)) await admin.client('KILL', 'ID', id);
      // longer than the lease after the kill: the client reconnects and the watchdog keeps the lease
      await sleep(2500);
      expect(lock.signal.reason).toBeUndefined();
      expect(await admin.exists(`${keyPrefix}{killed}`)).toBe(1);
      expect(await lock.release()).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('wakes a node-redis waiter whose connections were killed while it waited, once the holder releases', async () => {
    const name = `waiter${process.pid}`;
    const named = (await import('redis')).createClient({ url: testRedisUrl(), name }).on('error', () => undefined);
    opened.push(named as unknown as NodeRedisClient);
    const keyPrefix = uniquePrefix();
    const waiterApp = await bootLockApp({ redis: named as never, keyPrefix });
    const holderApp = await bootLockApp({ redis: testRedisUrl(), keyPrefix });
    try {
      const held = await holderApp.get(LockService).acquire('k', { ttl: 10_000 });
      const waiting = waiterApp.get(LockService).acquire('k', { ttl: 5000, wait: 8000 });
      await sleep(200);
      // the command connection and the notice connection (a duplicate, with the same name)
      for (const id of await connectionIds(admin, name)) await admin.client('KILL', 'ID', id);
      await sleep(200);
      await held.release();
      const lock = await waiting;
      expect(lock.isHeld).toBe(true);
      await lock.release();
    } finally {
      await Promise.all([waiterApp.close(), holderApp.close()]);
    }
  });

  describe('Redlock over three node-redis nodes', () => {
    const pool = new RedisServerPool();
    afterAll(() => pool.stop());

    it('grants one holder at a time and wakes a node-redis waiter by notice though its backoff is 10 s', async () => {
      const servers = await pool.servers(3);
      const nodes = servers.map((server) => nodeRedisClient(6, server.url));
      opened.push(...nodes);
      const keyPrefix = uniquePrefix();
      // about the clients, not latency: the default 200 ms per node is less than a loaded machine's first round
      const store = new RedlockStore({ nodes: nodes as never[], keyPrefix, timeout: 1000 });
      const other = new RedlockStore({ nodes: servers.map((server) => server.url), keyPrefix, timeout: 1000 });
      try {
        const first = await store.acquire({ key: 'r', token: 'a', ttl: 5000, fencing: true });
        expect(first).toMatchObject({ acquired: true });
        expect(await other.acquire({ key: 'r', token: 'b', ttl: 5000, fencing: false })).toMatchObject({
          acquired: false,
        });
        expect(await store.release('r', 'a')).toBe(true);
      } finally {
        await Promise.all([store.close(), other.close()]);
      }
      await expectRedlockWaiterWokenByNotice(
        nodes,
        servers.map((server) => server.url),
        keyPrefix,
      );
    });
  });

  describe('an ioredis process and a node-redis process on one key', () => {
    const children: ChildHandle[] = [];
    afterAll(() => Promise.all(children.map((child) => child.kill())));

    it('never has two inside', async () => {
      const env = { REDIS_URL: testRedisUrl(), KEY_PREFIX: uniquePrefix(), KEY: 'shared', SECTIONS: '40' };
      const started = ['ioredis', 'node-redis'].map((client) => startChild(WORKER, { ...env, CLIENT: client }));
      children.push(...started);
      await Promise.all(started.map((child) => child.waitFor('ready', 30_000)));
      for (const child of started) child.send('go');
      await Promise.all(started.map((child) => child.waitFor('done', 60_000)));
      for (const child of started) expect(/done (\d+)/.exec(child.output())![1]).toBe('1');
    }, 90_000);
  });
});
