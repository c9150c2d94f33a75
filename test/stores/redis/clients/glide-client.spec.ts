import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockService } from '../../../../lib/index.js';
import { RedlockStore } from '../../../../lib/stores/redlock/redlock.store.js';
import { resourceKeys } from '../../../../lib/stores/redis/resource-keys.js';
import { expectRedlockWaiterWokenByNotice } from '../../../support/redlock-notice-wake.js';
import { startChild, type ChildHandle } from '../../../support/child-process.js';
import { connectionIds } from '../../../support/connection-ids.js';
import { bootLockApp } from '../../../support/lock-app.js';
import {
  closeGlideClients,
  glideClient,
  glideClusterClient,
  type GlideTestClient,
} from '../../../support/client-stores.js';
import { clusterKind, RedisServerPool, testRedisUrl, uniquePrefix } from '../../../support/stores.js';

const WORKER = fileURLToPath(new URL('./mixed-worker.child.ts', import.meta.url));

/**
 * Resolves once the server has exactly `count` connections named `name`. GLIDE's close() returns at once and
 * its core drops the server connection a few seconds later, hence the long bound.
 */
async function untilConnections(admin: Redis, name: string, count: number): Promise<void> {
  const deadline = performance.now() + 15_000;
  while ((await connectionIds(admin, name)).length !== count) {
    if (performance.now() > deadline) throw new Error(`expected ${count} connections named ${name}`);
    await sleep(25);
  }
}

describe('a Valkey GLIDE client of your own', () => {
  const opened: GlideTestClient[] = [];
  let admin: Redis;

  beforeAll(() => {
    admin = new Redis(testRedisUrl());
  });

  afterEach(() => closeGlideClients(opened.splice(0)));

  afterAll(() => admin.quit());

  it('runs on a GlideClient, closes only its own notice connection on app.close(), and leaves the client usable', async () => {
    const name = `own${process.pid}`;
    const client = await glideClient(testRedisUrl(), name);
    opened.push(client);
    const keyPrefix = uniquePrefix();
    const app = await bootLockApp({ redis: client, keyPrefix });
    const locks = app.get(LockService);
    const held = await locks.acquire('mine');
    expect(await admin.exists(`${keyPrefix}{mine}`)).toBe(1);
    // a waiter makes the store open its notice connection, a second one with the client's name
    const waiting = locks.acquire('mine', { wait: 5000 });
    await untilConnections(admin, name, 2);
    await held.release();
    await (await waiting).release();
    await app.close();
    await untilConnections(admin, name, 1);
    expect(await client.customCommand(['PING'])).toBe('PONG');
    expect(await admin.exists(`${keyPrefix}{mine}`)).toBe(0);
  });

  it('wakes a GLIDE waiter by the release notice within milliseconds, though its backoff is 5 s or more', async () => {
    const client = await glideClient(testRedisUrl());
    opened.push(client);
    const keyPrefix = uniquePrefix();
    const waiterApp = await bootLockApp({ redis: client, keyPrefix });
    const holderApp = await bootLockApp({ redis: testRedisUrl(), keyPrefix });
    try {
      const held = await holderApp.get(LockService).acquire('notice', { ttl: 30_000 });
      const retry = { minDelay: 10_000, maxDelay: 10_000 };
      const waiter = waiterApp.get(LockService);
      const woken: number[] = [];
      for (let round = 0; round < 5; round++) {
        const holder = round === 0 ? held : await holderApp.get(LockService).acquire('notice', { ttl: 30_000 });
        const waiting = waiter.acquire('notice', { ttl: 30_000, wait: 20_000, retry });
        // the waiter was refused once and sleeps on its watch: its first backoff is at least 5 s
        await untilWaiting(admin, keyPrefix, 'notice');
        const releasedAt = performance.now();
        await holder.release();
        const lock = await waiting;
        woken.push(performance.now() - releasedAt);
        await lock.release();
      }
      // a few ms on an idle machine; the bound leaves room for a loaded one, far below the backoff
      expect(Math.max(...woken)).toBeLessThan(500);
    } finally {
      await Promise.all([waiterApp.close(), holderApp.close()]);
    }
  });

  it('keeps an auto-renewed lease alive on GLIDE for several times its ttl', async () => {
    const client = await glideClient(testRedisUrl());
    opened.push(client);
    const keyPrefix = uniquePrefix();
    const app = await bootLockApp({ redis: client, keyPrefix });
    try {
      const lock = await app.get(LockService).acquire('renewed', { ttl: 1000, autoRenew: true });
      await sleep(3500);
      expect(lock.signal.aborted).toBe(false);
      expect(await admin.pttl(`${keyPrefix}{renewed}`)).toBeGreaterThan(0);
      expect(await lock.release()).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('keeps a held lease renewed through a CLIENT KILL of its GLIDE connection', async () => {
    const name = `holder${process.pid}`;
    const client = await glideClient(testRedisUrl(), name);
    opened.push(client);
    const keyPrefix = uniquePrefix();
    const app = await bootLockApp({ redis: client, keyPrefix });
    try {
      const lock = await app.get(LockService).acquire('killed', { ttl: 2000, autoRenew: true });
      for (const id of await connectionIds(admin, name)) await admin.client('KILL', 'ID', id);
      // longer than the lease after the kill: GLIDE reconnects and the watchdog keeps the lease
      await sleep(2500);
      expect(lock.signal.reason).toBeUndefined();
      expect(await admin.exists(`${keyPrefix}{killed}`)).toBe(1);
      expect(await lock.release()).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('sends a command cut with its GLIDE connection once more, as ioredis does, instead of failing it', async () => {
    const name = `cut${process.pid}`;
    const client = await glideClient(testRedisUrl(), name);
    opened.push(client);
    const keyPrefix = uniquePrefix();
    const app = await bootLockApp({ redis: client, keyPrefix });
    const admin2 = new Redis(testRedisUrl());
    try {
      const locks = app.get(LockService);
      await locks.acquire('warm').then((lock) => lock.release());
      const ids = await connectionIds(admin, name);
      // the server runs a 200 ms script for another client: the acquires below are written and wait unanswered,
      // and the kill, queued behind them, drops the connection before their answers are written
      const busy =
        "local s = redis.call('TIME'); repeat local t = redis.call('TIME') until (t[1] - s[1]) * 1e6 + t[2] - s[2] > 200000";
      const blocking = admin2.eval(busy, 0);
      await sleep(20);
      const acquires = Array.from({ length: 5 }, (_, index) => locks.acquire(`cut:${index}`, { ttl: 10_000 }));
      await sleep(20);
      await Promise.all([blocking, ...ids.map((id) => admin.client('KILL', 'ID', id))]);
      const outcomes = await Promise.allSettled(acquires);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(acquires.map(() => 'fulfilled'));
      for (const outcome of outcomes)
        if (outcome.status === 'fulfilled') expect(await outcome.value.release()).toBe(true);
    } finally {
      await admin2.quit();
      await app.close();
    }
  });

  it('wakes a GLIDE waiter whose connections were killed while it waited, once the holder releases', async () => {
    const name = `waiter${process.pid}`;
    const client = await glideClient(testRedisUrl(), name);
    opened.push(client);
    const keyPrefix = uniquePrefix();
    const waiterApp = await bootLockApp({ redis: client, keyPrefix });
    const holderApp = await bootLockApp({ redis: testRedisUrl(), keyPrefix });
    try {
      const held = await holderApp.get(LockService).acquire('k', { ttl: 10_000 });
      const waiting = waiterApp.get(LockService).acquire('k', { ttl: 5000, wait: 8000 });
      // the command connection and the notice connection (made with the same settings, so the same name)
      await untilConnections(admin, name, 2);
      for (const id of await connectionIds(admin, name)) await admin.client('KILL', 'ID', id);
      await untilConnections(admin, name, 2);
      await held.release();
      const lock = await waiting;
      expect(lock.isHeld).toBe(true);
      await lock.release();
    } finally {
      await Promise.all([waiterApp.close(), holderApp.close()]);
    }
  });

  describe('Redlock over three GlideClient nodes', () => {
    const pool = new RedisServerPool();
    beforeAll(() => pool.servers(3), 30_000);
    afterAll(() => pool.stop());

    it('checks the nodes, grants one holder at a time, and wakes a GLIDE waiter by notice though its backoff is 5 s', async () => {
      const servers = await pool.servers(3);
      const nodes = await Promise.all(servers.map((server) => glideClient(server.url)));
      opened.push(...nodes);
      const keyPrefix = uniquePrefix();
      // about the clients, not latency: the default 200 ms per node is less than a loaded machine's first round
      const store = new RedlockStore({ nodes, keyPrefix, timeout: 1000 });
      const other = new RedlockStore({ nodes: servers.map((server) => server.url), keyPrefix, timeout: 1000 });
      try {
        expect((await store.verify()).warnings).toEqual([]);
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

  describe('a GlideClusterClient on a 3-master Cluster', () => {
    beforeAll(() => clusterKind.cluster(), 60_000);
    afterAll(() => clusterKind.stop());

    it('boots the module (scripts and eviction policy checked on every master), lists locks from every master, and leaves the client usable', async () => {
      const client = await glideClusterClient((await clusterKind.cluster()).startupNodes);
      opened.push(client);
      const keyPrefix = uniquePrefix();
      const app = await bootLockApp({ redis: client, keyPrefix });
      const locks = app.get(LockService);
      // keys on many slots: every master holds some
      const held = await Promise.all(Array.from({ length: 12 }, (_, index) => locks.acquire(`job:${index}`)));
      const listed = new Set<string>();
      let cursor: string | undefined;
      do {
        const page = await locks.list({ limit: 100, ...(cursor === undefined ? {} : { cursor }) });
        for (const lock of page.locks) listed.add(lock.key);
        cursor = page.cursor;
      } while (cursor !== undefined);
      expect([...listed].sort()).toEqual(Array.from({ length: 12 }, (_, index) => `job:${index}`).sort());
      await Promise.all(held.map((lock) => lock.release()));
      await app.close();
      expect(await client.customCommand(['PING'], { route: 'randomNode' })).toBe('PONG');
    });

    it('refuses a GlideClusterClient as a Redlock node at bootstrap, naming the node', async () => {
      const client = await glideClusterClient((await clusterKind.cluster()).startupNodes);
      opened.push(client);
      const url = testRedisUrl();
      await expect(bootLockApp({ redlock: { nodes: [url, client, url] } })).rejects.toThrow(
        /"redlock\.nodes\[1\]".*expected a standalone Redis node/,
      );
    });
  });

  describe('an ioredis process and a GLIDE process on one key', () => {
    const children: ChildHandle[] = [];
    afterAll(() => Promise.all(children.map((child) => child.kill())));

    it('never has two inside', async () => {
      const env = { REDIS_URL: testRedisUrl(), KEY_PREFIX: uniquePrefix(), KEY: 'shared', SECTIONS: '40' };
      const started = ['ioredis', 'glide'].map((client) => startChild(WORKER, { ...env, CLIENT: client }));
      children.push(...started);
      await Promise.all(started.map((child) => child.waitFor('ready', 30_000)));
      for (const child of started) child.send('go');
      await Promise.all(started.map((child) => child.waitFor('done', 60_000)));
      for (const child of started) expect(/done (\d+)/.exec(child.output())![1]).toBe('1');
    }, 90_000);
  });
});

/**
 * Resolves once a process stands in the line of `key` and listens for its notices (its waiter was refused
 * and sleeps on its watch), so what wakes it is the release notice.
 */
async function untilWaiting(admin: Redis, keyPrefix: string, key: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    const inLine = await admin.exists(resourceKeys(keyPrefix, key).line);
    const listening = (await admin.pubsub('CHANNELS', `${keyPrefix}*`)) as string[];
    if (inLine > 0 && listening.length > 0) return;
    if (tries > 400) throw new Error(`nobody waits for ${key}`);
    await sleep(5);
  }
}
