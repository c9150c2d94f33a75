import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { LockConfigurationError } from '../../../lib/errors/lock-configuration.error.js';
import type { LockLostError } from '../../../lib/errors/lock-lost.error.js';
import { LockNotAcquiredError } from '../../../lib/errors/lock-not-acquired.error.js';
import { LockStoreError } from '../../../lib/errors/lock-store.error.js';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { RedlockStore, type RedlockStoreOptions } from '../../../lib/stores/redlock/redlock.store.js';
import { runScript } from '../../../lib/stores/redis/script-runner.js';
import { toClientPort } from '../../../lib/stores/redis/client/client-port.js';
import { EXTEND, EXTEND_MANY } from '../../../lib/stores/redis/scripts/index.js';
import { resourceKeys } from '../../../lib/stores/redis/resource-keys.js';
import { newToken } from '../../../lib/utils/token.js';
import { blockEventLoop, sleepServer } from '../../support/faults.js';
import { lockUserRules } from '../../support/lock-user-acl.js';
import type { RedisServerHandle } from '../../support/redis-server.js';
import { RedisServerPool, uniquePrefix } from '../../support/stores.js';
import { storedToken } from '../../support/stored-token.js';
import { abortReason, within } from '../../support/within.js';

/** Short enough that a dead node costs little, long enough for a live one on a machine with both cores busy. */
const NODE_TIMEOUT = 500;

const pool = new RedisServerPool();
let servers: RedisServerHandle[];
/** One client per server, passed to the stores (so they are never closed by them) and used to look inside. */
let clients: Redis[];
let prefix: string;
const cleanup: Array<() => Promise<unknown>> = [];

/** Script calls the stores have sent through the test's clients and not yet seen answered. */
const inFlight = new Set<Promise<unknown>>();

/**
 * Waits until every script call sent through the test's clients is answered, NOSCRIPT retries included: a
 * release returns once a quorum released, and the rest of its nodes follow.
 */
async function settled(): Promise<void> {
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
}

/** `client` with its script calls (EVALSHA, EVAL) sent through `around`; every other member as it is. */
function aroundScripts(client: Redis, around: (send: () => Promise<unknown>) => Promise<unknown>): Redis {
  return new Proxy(client, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      if (property !== 'evalsha' && property !== 'eval') return value.bind(target);
      return (...args: unknown[]) => around(() => value.apply(target, args) as Promise<unknown>);
    },
  });
}

/** A client that records its script calls in `inFlight`. */
function tracked(client: Redis): Redis {
  return aroundScripts(client, (send) => {
    const call = send();
    inFlight.add(call);
    void call.then(
      () => inFlight.delete(call),
      () => inFlight.delete(call),
    );
    return call;
  });
}

function connect(server: RedisServerHandle): Redis {
  // reconnect fast after a restart; a command for a dead server fails at the next failed reconnect.
  // ioredis arms a disconnectTimeout timer (2 s by default) when a connection whose socket is already gone
  // is closed, and nothing clears it: keep it short so closing a store with a dead node leaves no handle.
  const client = new Redis(server.url, { maxRetriesPerRequest: 1, retryStrategy: () => 20, disconnectTimeout: 50 });
  client.on('error', () => undefined);
  return tracked(client);
}

function store(options: Partial<RedlockStoreOptions> = {}): RedlockStore {
  const created = new RedlockStore({ nodes: clients, keyPrefix: prefix, timeout: NODE_TIMEOUT, ...options });
  cleanup.push(() => created.close());
  return created;
}

function manager(lockStore: RedlockStore): LockManager {
  const created = new LockManager({ store: lockStore });
  cleanup.push(() => created.close());
  return created;
}

/** Resolves once `client` is connected and ready (at once if it already is); failed reconnects do not count. */
async function ready(client: Redis): Promise<void> {
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
}

/** Which nodes hold a lease on `key` once every script call sent so far is answered. */
async function holders(key: string): Promise<number[]> {
  await settled();
  const lock = resourceKeys(prefix, key).lock;
  const held = await Promise.all(clients.map(async (client) => (await client.exists(lock)) === 1));
  return held.flatMap((isHeld, index) => (isHeld ? [index] : []));
}

/** Sets a lease on some nodes directly, as a holder that reached them would have. */
async function holdOn(nodes: number[], key: string, ttl: number): Promise<void> {
  const lock = resourceKeys(prefix, key).lock;
  await Promise.all(nodes.map((node) => clients[node].set(lock, 'someone-else', 'PX', ttl)));
}

async function restart(node: number): Promise<void> {
  if (servers[node].running) {
    servers[node].resume();
  } else {
    await servers[node].start();
  }
  await ready(clients[node]);
}

/** A client whose script calls reach the server `latency` ms late each, still in the order they were made. */
function delayed(client: Redis, latency: number): Redis {
  let queue: Promise<unknown> = Promise.resolve();
  return aroundScripts(client, (send) => {
    const call = queue.then(() => sleep(latency)).then(send);
    queue = call.catch(() => undefined);
    return call;
  });
}

beforeAll(async () => {
  servers = await pool.servers(3);
});

afterAll(() => pool.stop());

beforeEach(async () => {
  prefix = uniquePrefix();
  for (const server of servers) if (!server.running) await server.start();
  clients = servers.map(connect);
  await Promise.all(clients.map(ready));
});

afterEach(async () => {
  for (const server of servers) server.resume();
  await Promise.all(cleanup.splice(0).map((close) => close()));
  await Promise.all(clients.map((client) => client.quit().catch(() => client.disconnect())));
});

describe('RedlockStore configuration', () => {
  it.each([
    [1, /got 1: a quorum of 1 node is that node alone.*use RedisLockStore/],
    [2, /got 2: a quorum of 2 nodes \(a majority, N\/2\+1\) is both of them, so losing either one stops all locking/],
    [4, /got 4: a quorum of 4 nodes \(a majority, N\/2\+1\) is 3, so they survive the loss of 1.*Use 3 or 5 nodes/],
  ])('refuses %i nodes with a LockConfigurationError that explains the quorum', (count, message) => {
    const nodes = Array.from({ length: count }, (_, i) => `redis://127.0.0.1:${1 + i}`);
    const error = (() => {
      try {
        return new RedlockStore({ nodes });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as LockConfigurationError).option).toBe('nodes');
    expect((error as Error).message).toMatch(message);
  });

  it.each<[string, () => Partial<RedlockStoreOptions>, RegExp]>([
    ['no nodes at all', () => ({ nodes: undefined }), /"nodes".*expected an array of 3, 5 or more/],
    ['the same server twice', () => ({ nodes: [clients[0], clients[1], servers[0].url] }), /"nodes\[2\]".*same server/],
    ['a URL that is not redis://', () => ({ nodes: [...clients.slice(0, 2), 'http://x'] }), /"nodes\[2\]".*redis:\/\//],
    ['a value that is no node', () => ({ nodes: [...clients.slice(0, 2), 42 as never] }), /"nodes\[2\]": got 42/],
    ['a negative driftFactor', () => ({ driftFactor: -0.1 }), /"driftFactor": got -0.1/],
    ['a zero timeout', () => ({ timeout: 0 }), /"timeout": got 0/],
    ['a keyPrefix with a brace', () => ({ keyPrefix: 'a{' }), /"keyPrefix"/],
    ['releaseNotices that is no boolean', () => ({ releaseNotices: 'yes' as never }), /"releaseNotices"/],
    ['a fractional handoffWindow', () => ({ handoffWindow: 1.5 }), /"handoffWindow": got 1.5/],
  ])('refuses %s at construction', (_label, options, message) => {
    expect(() => new RedlockStore({ nodes: clients, ...options() } as RedlockStoreOptions)).toThrow(
      expect.objectContaining({ name: 'LockConfigurationError', message: expect.stringMatching(message) }),
    );
  });

  it('refuses a Redis Cluster, which is one lock space, not independent nodes', () => {
    const cluster = { isCluster: true, evalsha: () => undefined };
    expect(() => new RedlockStore({ nodes: [...clients.slice(0, 2), cluster as never] })).toThrow(
      /standalone Redis node.*use RedisLockStore for a Cluster/,
    );
  });

  it('never closes the clients it was given, and closes the connections it opened', async () => {
    const owned = new RedlockStore({ nodes: servers.map((server) => server.url), keyPrefix: prefix });
    const given = store();
    for (const redlock of [owned, given]) {
      const token = newToken();
      expect(await redlock.acquire({ key: 'k', token, ttl: 5000, fencing: false })).toEqual({ acquired: true });
      expect(await redlock.release('k', token)).toBe(true);
      await redlock.watch('k').then((watch) => watch.close());
    }
    const ownedClients = (owned as unknown as { nodes: { clients(): Redis[] } }).nodes.clients();
    const ended = Promise.all(ownedClients.map((client) => once(client, 'end')));
    await Promise.all([owned.close(), given.close()]);
    await ended;
    expect(await Promise.all(clients.map((client) => client.ping()))).toEqual(['PONG', 'PONG', 'PONG']);
  });
});

describe('RedlockStore shutdown', () => {
  it('closes at once with a node down, even over clients that retry for a minute (ioredis defaults)', async () => {
    const patient = servers.map((server) => new Redis(server.url, { disconnectTimeout: 50 }));
    patient.forEach((client) => client.on('error', () => undefined));
    cleanup.push(async () => patient.forEach((client) => client.disconnect()));
    await Promise.all(patient.map(ready));
    const redlock = new RedlockStore({ nodes: patient, keyPrefix: prefix, timeout: NODE_TIMEOUT });
    await servers[2].kill();
    // node 2's SUBSCRIBE now waits in its client's queue
    (await redlock.watch('k')).close();
    const started = performance.now();
    await redlock.close();
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('RedlockStore.verify', () => {
  it('asks each node for INFO once, for its identity and its version together', async () => {
    const infoCalls = async (client: Redis): Promise<number> =>
      Number(/^cmdstat_info:calls=(\d+)/m.exec(await client.info('commandstats'))?.[1] ?? 0);
    const before = await Promise.all(clients.map(infoCalls));
    expect(await store().verify()).toEqual({ warnings: [] });
    const after = await Promise.all(clients.map(infoCalls));
    // the INFO that counted before is counted after, with the store's own
    expect(after.map((calls, node) => calls - before[node])).toEqual([2, 2, 2]);
  });
});

describe('RedlockStore with every node up', () => {
  it('grants on every node, extends and releases on every node', async () => {
    const redlock = store();
    const token = newToken();
    expect(await redlock.acquire({ key: 'k', token, ttl: 5000, fencing: true })).toEqual({
      acquired: true,
      fence: expect.any(Number),
    });
    expect(await holders('k')).toEqual([0, 1, 2]);
    expect(await redlock.extend('k', token, 9000)).toBe(true);
    expect((await redlock.inspect('k')).remainingTtl).toBeGreaterThan(8000);
    expect(await redlock.release('k', token)).toBe(true);
    expect(await holders('k')).toEqual([]);
  });

  it('answers contention with the longest remaining hold among the refusing nodes, and leaves no partial lease', async () => {
    await holdOn([1], 'busy', 3000);
    await holdOn([2], 'busy', 6000);
    const result = await store().acquire({ key: 'busy', token: newToken(), ttl: 5000, fencing: true });
    expect(result.acquired).toBe(false);
    if (!result.acquired) expect(result.remainingTtl).toBeGreaterThan(5000);
    expect(await holders('busy')).toEqual([1, 2]);
  });

  it('is held only when one token is on a quorum, not when leases of different tokens add up to one', async () => {
    const lock = resourceKeys(prefix, 'split').lock;
    await Promise.all([clients[0].set(lock, 'a', 'PX', 5000), clients[1].set(lock, 'b', 'PX', 5000)]);
    expect((await store().inspect('split')).held).toBe(false);
    await clients[2].set(lock, 'b', 'PX', 2000);
    const state = await store().inspect('split');
    expect(state.held).toBe(true);
    // held until the second-longest of b's leases ends: the quorum is lost when the shorter one does
    expect(state.remainingTtl).toBeLessThanOrEqual(2000);
  });
});

describe('RedlockStore when nodes fail', () => {
  it('acquires, extends, inspects and releases with one node killed, and still refuses a second holder', async () => {
    const [holder, other] = [store(), store()];
    await servers[2].kill();
    const token = newToken();
    const granted = await holder.acquire({ key: 'k', token, ttl: 5000, fencing: true });
    expect(granted).toEqual({ acquired: true, fence: expect.any(Number) });
    const refused = await other.acquire({ key: 'k', token: newToken(), ttl: 5000, fencing: true });
    expect(refused.acquired).toBe(false);
    expect(await holder.extend('k', token, 8000)).toBe(true);
    expect(await holder.extendMany([{ key: 'k', token, ttl: 8000 }])).toEqual([true]);
    expect(await other.inspect('k')).toMatchObject({ held: true, fence: granted.acquired ? granted.fence : -1 });
    expect(await holder.release('k', token)).toBe(true);
    expect((await other.inspect('k')).held).toBe(false);
  });

  it('fails with a LockStoreError saying no quorum was reachable when a majority is killed, never as contention', async () => {
    const redlock = store();
    await Promise.all([servers[0].kill(), servers[2].kill()]);
    const token = newToken();
    const error = await redlock.acquire({ key: 'k', token, ttl: 5000, fencing: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect(error).not.toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).message).toMatch(
      /^Lock store failed to acquire: no quorum was reachable: 2 of 3 Redis nodes unreachable; a quorum of 2 is needed \(127\.0\.0\.1:\d+: .+; 127\.0\.0\.1:\d+: .+\)$/,
    );
    // the one node that answered granted it, and was released again
    expect(await clients[1].exists(resourceKeys(prefix, 'k').lock)).toBe(0);
    await expect(redlock.release('k', token)).rejects.toThrow(/failed to release: no quorum was reachable/);
    await expect(redlock.extend('k', token, 5000)).rejects.toThrow(/failed to extend: no quorum was reachable/);
    await expect(redlock.inspect('k')).rejects.toThrow(/failed to inspect: no quorum was reachable/);
    const [renewal] = await redlock.extendMany([{ key: 'k', token, ttl: 5000 }]);
    expect(renewal).toBeInstanceOf(LockStoreError);
  });

  it("keeps the nodes' refusals on its error without their command's arguments (the token, the key)", async () => {
    const redlock = store();
    // two nodes out of memory refuse the script's writes with an error reply, which ioredis gives the command
    await Promise.all([0, 2].map((node) => clients[node].config('SET', 'maxmemory', '1')));
    cleanup.push(() => Promise.all([0, 2].map((node) => clients[node].config('SET', 'maxmemory', '0'))));
    const token = newToken();
    const error = await redlock
      .acquire({ key: 'inventory:42', token, ttl: 5000, fencing: false })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    const printed = inspect(error, { depth: 10 });
    expect(printed).toContain('OOM');
    expect(printed).not.toContain(token);
    expect(printed).not.toContain('inventory:42');
  });

  it('makes a waiting LockManager fail at once with LockStoreError on an outage, and LockNotAcquiredError on contention', async () => {
    const [holder, waiter] = [manager(store()), manager(store())];
    const lock = await holder.acquire('job', { ttl: 10_000 });
    const busy = await waiter.acquire('job', { wait: 200 }).catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(LockNotAcquiredError);
    await Promise.all([servers[0].kill(), servers[1].kill()]);
    const started = performance.now();
    const broken = await waiter.acquire('job', { wait: 5000 }).catch((e: unknown) => e);
    expect(broken).toBeInstanceOf(LockStoreError);
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(lock.release()).rejects.toBeInstanceOf(LockStoreError);
  });

  it('does not call a lease free when the nodes that did not answer may complete its quorum', async () => {
    const token = newToken();
    await store().acquire({ key: 'k', token, ttl: 10_000, fencing: false });
    // the grant was decided by a quorum: the third node's copy may still be on its way, and must land before
    // it is deleted, or it would land after and leave the lease on every node that answers
    const lockKey = resourceKeys(prefix, 'k').lock;
    while ((await Promise.all(clients.map((client) => client.exists(lockKey)))).some((found) => found === 0)) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    // the lease is left on nodes 0 and 1 (node 2 lost its copy), and node 0 is frozen: the answers show one copy
    await clients[2].del(lockKey);
    servers[0].pause();
    const error = await store()
      .inspect('k')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(
      /^Lock store failed to inspect: cannot tell whether it is held: one lease is on 1 of the nodes that answered, and the 1 that did not may complete its quorum of 2 \(127\.0\.0\.1:\d+: no reply within \d+ ms\)$/,
    );
    servers[0].resume();
    expect(await store().inspect('k')).toMatchObject({ held: true });
  });

  it('keeps leases mutually exclusive across a node restart, and grants on the restarted node afterwards', async () => {
    const [holder, other] = [store(), store()];
    const token = newToken();
    const first = await holder.acquire({ key: 'k', token, ttl: 10_000, fencing: true });
    const firstFence = first.acquired ? first.fence : undefined;
    // every node answered before the crash (else the client would replay the grant to the restarted node)
    expect(await holders('k')).toEqual([0, 1, 2]);
    await servers[0].kill();
    await restart(0);
    expect(await holders('k')).toEqual([1, 2]);
    const refused = await other.acquire({ key: 'k', token: newToken(), ttl: 10_000, fencing: true });
    expect(refused.acquired).toBe(false);
    // the other store's attempt won the empty node for a moment; it was undone
    expect(await holders('k')).toEqual([1, 2]);
    expect(await holder.extend('k', token, 10_000)).toBe(true);
    expect(await holder.release('k', token)).toBe(true);
    const next = await other.acquire({ key: 'k', token: newToken(), ttl: 10_000, fencing: true });
    expect(next).toEqual({ acquired: true, fence: expect.any(Number) });
    expect(next.acquired && next.fence).toBeGreaterThan(firstFence!);
    expect(await holders('k')).toEqual([0, 1, 2]);
  });

  /** Grants `key` with a fence once and releases it again. */
  async function fenceOf(redlock: RedlockStore, key: string): Promise<number | undefined> {
    const token = newToken();
    const result = await redlock.acquire({ key, token, ttl: 5000, fencing: true });
    expect(result.acquired).toBe(true);
    await redlock.release(key, token);
    return result.acquired ? result.fence : undefined;
  }

  async function replace(node: number): Promise<void> {
    await servers[node].kill();
    await restart(node);
  }

  it('keeps fences increasing while nodes die and come back empty, as long as consecutive quorums share a node that kept its data', async () => {
    const redlock = store();
    await servers[2].kill();
    const first = [await fenceOf(redlock, 'f'), await fenceOf(redlock, 'f'), await fenceOf(redlock, 'f')];
    expect(first[1]).toBeGreaterThan(first[0]!);
    expect(first[2]).toBeGreaterThan(first[1]!);
    // node 2 returns empty, node 0 dies: the quorum is {1, 2}
    await restart(2);
    await servers[0].kill();
    const fourth = await fenceOf(redlock, 'f');
    expect(fourth).toBeGreaterThan(first[2]!);
    // node 0 returns empty, node 1 dies: the quorum {0, 2} shares only node 2 with the last one
    await restart(0);
    await servers[1].kill();
    expect(await fenceOf(redlock, 'f')).toBeGreaterThan(fourth!);
  });

  it('keeps fences increasing even when the only node two consecutive quorums share restarted empty, as empty counters restart from the server clock', async () => {
    const redlock = store();
    await servers[2].kill();
    await fenceOf(redlock, 'f');
    const second = await fenceOf(redlock, 'f');
    // the client gives up on what it queued for node 2 (else it would replay the grants once node 2 is back)
    await expect(clients[2].ping()).rejects.toThrow();
    await restart(2);
    await replace(0);
    await servers[1].kill();
    // the quorum is now {0, 2}: node 2 never saw the grants, node 0 forgot them; both counters start over
    // from their server clocks, which have moved on since the grants above (a clock that went back would not)
    expect(await fenceOf(redlock, 'f')).toBeGreaterThan(second!);
  });

  const subsets = [0, 1, 2, 3, 4, 5, 6, 7].map((mask) => [0, 1, 2].filter((node) => mask & (1 << node)));
  describe.each([
    ['killed', (node: number) => servers[node].kill()],
    ['frozen', async (node: number) => servers[node].pause()],
  ])('with nodes %s', (_how, takeDown) => {
    it.each(subsets.map((down) => [JSON.stringify(down), down]))(
      'down %s: works while a quorum is up, else fails with LockStoreError, and leaves no lease behind',
      async (_label, down) => {
        const redlock = store();
        await Promise.all(down.map(takeDown));
        const token = newToken();
        if (down.length <= 1) {
          expect(await redlock.acquire({ key: 'k', token, ttl: 5000, fencing: true })).toMatchObject({
            acquired: true,
          });
          expect(await redlock.inspect('k')).toMatchObject({ held: true });
          expect(await redlock.extend('k', token, 5000)).toBe(true);
          expect(await redlock.release('k', token)).toBe(true);
        } else {
          const noQuorum = new RegExp(`no quorum was reachable: ${down.length} of 3 Redis nodes unreachable`);
          await expect(redlock.acquire({ key: 'k', token, ttl: 5000, fencing: true })).rejects.toThrow(noQuorum);
          await expect(redlock.extend('k', token, 5000)).rejects.toThrow(noQuorum);
          await expect(redlock.inspect('k')).rejects.toThrow(noQuorum);
          await expect(redlock.release('k', token)).rejects.toThrow(noQuorum);
        }
        await Promise.all(down.map(restart));
        // a frozen node now runs what it was sent, in order: a late grant is followed by its release
        expect(await holders('k')).toEqual([]);
      },
    );
  });
});

describe('RedlockStore losses found by a renewal while a node is silent', () => {
  /**
   * Long, so that a second round waiting for the frozen node costs seconds, not a few ms (the store also gives up
   * a command on a client without `commandTimeout` after 2 s, so no longer than that).
   */
  const SLOW_NODE_TIMEOUT = 2000;

  /** A store whose renewals record when their answer came back, as its holder's renewer reads it. */
  function timedStore(): { redlock: RedlockStore; renewalAnsweredAt: () => number } {
    const redlock = store({ timeout: SLOW_NODE_TIMEOUT });
    let answeredAt = Infinity;
    const extendMany = redlock.extendMany.bind(redlock);
    redlock.extendMany = async (renewals) => {
      const outcomes = await extendMany(renewals);
      answeredAt = performance.now();
      return outcomes;
    };
    return { redlock, renewalAnsweredAt: () => answeredAt };
  }

  it("aborts the holder's signal as the renewal shows its lease taken, not a node timeout later", async () => {
    const { redlock, renewalAnsweredAt } = timedStore();
    const lock = await manager(redlock).acquire('job', { ttl: 12_000, autoRenew: true });
    // node 2 answers nobody, and a rival holds the key on the two others: the renewal is lost by their answers
    servers[2].pause();
    await holdOn([0, 1], 'job', 60_000);
    const reason = await within(abortReason(lock.signal), 20_000, "the holder's abort");
    const abortedAfter = performance.now() - renewalAnsweredAt();
    expect((reason as LockLostError).reason).toBe('taken');
    // without: a second round asked every node why, and waited the frozen one's timeout (2 s) before aborting
    expect(abortedAfter).toBeLessThan(SLOW_NODE_TIMEOUT / 2);
  });

  it("aborts a revoked holder's signal as the renewal shows it, and says revoked", async () => {
    const { redlock, renewalAnsweredAt } = timedStore();
    const lock = await manager(redlock).acquire('job', { ttl: 12_000, autoRenew: true });
    servers[2].pause();
    // an operator's forced release, which reaches the quorum of nodes 0 and 1
    expect(await redlock.capabilities.revoking!.revoke('job')).toMatchObject({ ended: 1 });
    const reason = await within(abortReason(lock.signal), 20_000, "the holder's abort");
    const abortedAfter = performance.now() - renewalAnsweredAt();
    expect((reason as LockLostError).reason).toBe('revoked');
    expect(abortedAfter).toBeLessThan(SLOW_NODE_TIMEOUT / 2);
  });
});

describe('RedlockStore renewals after a node lost its data', () => {
  const names = (key: string) => resourceKeys(prefix, key);

  async function replace(node: number): Promise<void> {
    await servers[node].kill();
    await restart(node);
  }

  /** Resolves once `locks` has renewed leases `count` times from now. */
  function renewals(locks: LockManager, count: number): Promise<void> {
    return new Promise((resolve) => {
      let seen = 0;
      const off = locks.on('renewed', () => {
        if (++seen < count) return;
        off();
        resolve();
      });
    });
  }

  it('tells a missing lease (-2) from one another token holds (0) in EXTEND and EXTEND_MANY', async () => {
    const lock = names('k').lock;
    const extend = () => runScript(toClientPort(clients[0], 'client'), EXTEND, [lock], ['mine', 5000]);
    const extendMany = () => runScript(toClientPort(clients[0], 'client'), EXTEND_MANY, [lock], ['mine', 5000]);
    expect([await extend(), await extendMany()]).toEqual([-2, [-2]]);
    await clients[0].set(lock, 'theirs', 'PX', 5000);
    expect([await extend(), await extendMany()]).toEqual([0, [0]]);
    await clients[0].set(lock, 'mine', 'PX', 5000);
    expect([await extend(), await extendMany()]).toEqual([1, [1]]);
  });

  it('gives a renewed lease back to a node that restarted empty: same token, holder record, no fence counter', async () => {
    const holder = store();
    const token = newToken();
    const record = '{"label":"Billing.run"}';
    await holder.acquire({ key: 'k', token, ttl: 10_000, fencing: true, holder: record });
    expect(await holders('k')).toEqual([0, 1, 2]);
    await replace(0);
    expect(await holders('k')).toEqual([1, 2]);
    expect(await holder.extend('k', token, 10_000)).toBe(true);
    expect(await holders('k')).toEqual([0, 1, 2]);
    // the holder record travels inside the lease's value
    expect(await clients[0].get(names('k').lock)).toBe(`${token}\n${record}`);
    // what was left of the renewal's ttl when it was sent, not a fresh one: it ends with the extended copies
    const pttl = await clients[0].pttl(names('k').lock);
    expect(pttl).toBeLessThan(10_000);
    expect(pttl).toBeGreaterThan(9000);
    // the fence stays the grant's: the empty counter is left for the next grant to seed from the clock
    expect(await clients[0].exists(names('k').fence)).toBe(0);
    expect(await store().inspect('k')).toMatchObject({ held: true, holder: record });
  });

  it('leaves a node where another token holds the key untouched', async () => {
    const holder = store();
    const token = newToken();
    await holder.acquire({ key: 'k', token, ttl: 10_000, fencing: false });
    // every node answered before the crash (else the client would replay the grant to the restarted node)
    expect(await holders('k')).toEqual([0, 1, 2]);
    await replace(0);
    await holdOn([0], 'k', 10_000);
    expect(await holder.extend('k', token, 10_000)).toBe(true);
    await settled();
    expect(await clients[0].get(names('k').lock)).toBe('someone-else');
  });

  it('gives nothing back when the extensions alone reach no quorum: the lease is lost, not rebuilt', async () => {
    const holder = store();
    const token = newToken();
    await holder.acquire({ key: 'k', token, ttl: 10_000, fencing: false });
    expect(await holders('k')).toEqual([0, 1, 2]);
    await Promise.all([replace(1), replace(2)]);
    expect(await holder.extend('k', token, 10_000)).toBe(false);
    expect(await holders('k')).toEqual([0]);
  });

  it('does not call a lease lost while a silent node and the extended ones could still make its quorum', async () => {
    const holder = store();
    const token = newToken();
    await holder.acquire({ key: 'k', token, ttl: 10_000, fencing: false });
    expect(await holders('k')).toEqual([0, 1, 2]);
    // node 2 lost the lease; node 1 answers nobody for a while: node 0's extension and node 1's may still agree
    await clients[2].del(names('k').lock);
    const asleep = await sleepServer(servers[1].url, 1.5);
    const outcome = await holder.extend('k', token, 10_000).catch((error: unknown) => error);
    await asleep.awake;
    // without: `false`, the holder told its lease was taken while nobody else could hold it
    expect(outcome).toBeInstanceOf(LockStoreError);
    expect(await holder.extend('k', token, 10_000)).toBe(true);
    await settled();
    expect(await holders('k')).toEqual([0, 1, 2]);
  });

  it('says what the nodes did when a silent node could still make the quorum, not that none was reachable', async () => {
    const holder = store();
    const token = newToken();
    await holder.acquire({ key: 'inventory:42', token, ttl: 10_000, fencing: false });
    expect(await holders('inventory:42')).toEqual([0, 1, 2]);
    // node 0 extends, node 2 has lost the lease, node 1 answers nobody for a while
    await clients[2].del(names('inventory:42').lock);
    const asleep = await sleepServer(servers[1].url, 1.5);
    const [renewal] = await holder.extendMany([{ key: 'inventory:42', token, ttl: 10_000 }]);
    await asleep.awake;
    expect(renewal).toBeInstanceOf(LockStoreError);
    // without: "no quorum was reachable: 1 of 3 Redis nodes unreachable", though two of them answered
    expect((renewal as Error).message).toMatch(
      /^Lock store failed to renew: cannot tell whether the lease is still held: 1 of 3 Redis nodes extended it, 1 had nothing under the key \(a restart or its expiry there lost it\), and 1 did not answer \(127\.0\.0\.1:\d+: no reply within \d+ ms\); that node may have extended it too, which with the 1 that did would make the quorum of 2$/,
    );
    const printed = inspect(renewal, { depth: 10 });
    expect(printed).not.toContain(token);
    expect(printed).not.toContain('inventory:42');
  });

  it('gives nothing back for a lease released between its extension and the re-grant', async () => {
    const lock = names('k').lock;
    // the release lands on the nodes that extended the lease just before the re-grant reads its holder record
    const source = new Proxy(clients[0], {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (property !== 'mget' || typeof value !== 'function')
          return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          await Promise.all([clients[0].del(lock), clients[1].del(lock)]);
          return value.apply(target, args) as Promise<unknown>;
        };
      },
    });
    const holder = new RedlockStore({
      nodes: [source, clients[1], clients[2]],
      keyPrefix: prefix,
      timeout: NODE_TIMEOUT,
    });
    cleanup.push(() => holder.close());
    const token = newToken();
    await holder.acquire({ key: 'k', token, ttl: 10_000, fencing: false });
    await clients[2].del(lock);
    expect(await holder.extend('k', token, 10_000)).toBe(true);
    await settled();
    // without: node 2 was given the released lease back, a copy nobody holds that keeps the key from a quorum
    expect(await holders('k')).toEqual([]);
  });

  it('gives each lease of a batch back where it is missing, and none of a lease the batch lost', async () => {
    const holder = store();
    const leases = ['a', 'b', 'c'].map((key) => ({ key, token: newToken(), ttl: 10_000 }));
    for (const lease of leases) await holder.acquire({ ...lease, fencing: false });
    await settled();
    await Promise.all([
      clients[0].del(names('a').lock),
      clients[1].del(names('b').lock),
      clients[0].del(names('c').lock),
      clients[1].del(names('c').lock),
    ]);
    expect(await holder.extendMany(leases)).toEqual([true, true, false]);
    expect(await holders('a')).toEqual([0, 1, 2]);
    expect(await holders('b')).toEqual([0, 1, 2]);
    expect(await holders('c')).toEqual([2]);
  });

  it('gives the lease back to a restarted node that answers after the quorum, and counts validity from the quorum', async () => {
    const token = newToken();
    await store().acquire({ key: 'k', token, ttl: 10_000, fencing: false });
    expect(await holders('k')).toEqual([0, 1, 2]);
    await replace(0);
    // the holder's view of the nodes: node A answers 100 ms after the other two
    const holder = store({ nodes: [delayed(clients[0], 100), clients[1], clients[2]] });
    // scripts cached on the restarted node, so it is slow once per call, not twice (NOSCRIPT, EVAL)
    await holder.verify();
    expect(await holder.extend('k', token, 10_000)).toBe(true);
    expect(await holders('k')).toEqual([0, 1, 2]);
    // a 60 ms lease would have no validity left if counted from the slow node's answer
    expect(await holder.extend('k', token, 60)).toBe(true);
  });

  it('gives the lease back for a user with only the commands docs/stores.md lists', async () => {
    await Promise.all(
      clients.map((client) => client.call('ACL', 'SETUSER', 'least', 'on', '>pw', ...lockUserRules(prefix))),
    );
    const nodes = servers.map((server) => {
      const client = new Redis(server.port, '127.0.0.1', {
        username: 'least',
        password: 'pw',
        maxRetriesPerRequest: 1,
      });
      client.on('error', () => undefined);
      cleanup.push(() => client.quit().catch(() => client.disconnect()));
      return tracked(client);
    });
    const holder = store({ nodes });
    expect(await holder.verify()).toEqual({ warnings: [] });
    const token = newToken();
    await holder.acquire({ key: 'k', token, ttl: 10_000, fencing: true, holder: '{"label":"Least.run"}' });
    expect(await holders('k')).toEqual([0, 1, 2]);
    await clients[0].del(names('k').lock);
    expect(await holder.extend('k', token, 10_000)).toBe(true);
    expect(storedToken(await clients[0].get(names('k').lock))).toBe(token);
    expect(await holder.release('k', token)).toBe(true);
  });

  it('keeps the lease through node A restarting empty, one renewal, then node B restarting empty: a rival is refused', async () => {
    const holderLocks = manager(store());
    const lock = await holderLocks.acquire('job', { ttl: 1500, autoRenew: true });
    expect(await holders('job')).toEqual([0, 1, 2]);
    await replace(0);
    // the first renewal heard may have been sent while node A was down; the second was sent after it
    await renewals(holderLocks, 2);
    await replace(1);
    expect(await manager(store()).tryAcquire('job')).toBeNull();
    expect(lock.isHeld).toBe(true);
    expect(lock.signal.aborted).toBe(false);
    // a second store, as another process would see it: held by a quorum
    expect(await store().inspect('job')).toMatchObject({ held: true });
  });
});

describe('RedlockStore validity', () => {
  // scripts already cached on every node, so a delayed node is slow once per call, not twice (NOSCRIPT, EVAL)
  beforeEach(() => store().verify());

  it('refuses a grant the quorum gave too late for any validity, and undoes it on every node', async () => {
    clients = [delayed(clients[0], 120), delayed(clients[1], 120), clients[2]];
    const redlock = store({ timeout: 1000 });
    const error = await redlock.acquire({ key: 'slow', token: newToken(), ttl: 100, fencing: false }).catch((e) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(
      /the nodes took \d+ ms to grant a 100 ms lease \(with 3 ms allowed for clock drift\), so no validity was left.*undone on every node/,
    );
    expect(await holders('slow')).toEqual([]);
  });

  it('charges the time the quorum took to the validity of the lease', async () => {
    clients = [delayed(clients[0], 80), delayed(clients[1], 80), clients[2]];
    const lock = await manager(store({ timeout: 1000 })).acquire('slow', { ttl: 1000 });
    expect(lock.remainingTime).toBeLessThanOrEqual(1000 - 80 - 12);
    expect(lock.remainingTime).toBeGreaterThan(500);
    await lock.release();
  });

  it("counts a holder's validity with the store's driftFactor, on grant and on extend", async () => {
    const lock = await manager(store({ driftFactor: 0.2 })).acquire('drifty', { ttl: 1000 });
    expect(lock.remainingTime).toBeLessThanOrEqual(1000 - 202);
    expect(lock.remainingTime).toBeGreaterThan(500);
    await lock.extend(2000);
    expect(lock.remainingTime).toBeLessThanOrEqual(2000 - 402);
    expect(lock.remainingTime).toBeGreaterThan(1000);
    await lock.release();
  });

  it('releases a lease kept for a few ms, as a job ending just before its holdAtLeast does, with no store error', async () => {
    const locks = manager(store());
    const storeErrors: unknown[] = [];
    locks.on('store-error', (event) => storeErrors.push(event));
    const released = new Promise<number | undefined>((resolve) =>
      locks.on('released', (event) => resolve(event.keptFor)),
    );
    const lock = await locks.acquire('tick', { ttl: 10_000 });
    // 2 ms: no more than the drift allowance of a 2 ms lease, so no answer could leave it validity
    expect(await lock.release(2)).toBe(true);
    expect(await released).toBe(2);
    expect(storeErrors).toEqual([]);
  });

  it('answers true for a keep of a few ms on nodes a few ms away, and the key ends within it', async () => {
    clients = clients.map((client) => delayed(client, 20));
    const redlock = store({ timeout: 1000 });
    const token = newToken();
    await redlock.acquire({ key: 'tick', token, ttl: 10_000, fencing: false });
    // without: "the nodes took 20 ms to extend a 5 ms lease ..., so no validity was left", though they kept it
    expect(await redlock.extend('tick', token, 5)).toBe(true);
    await within(
      (async () => {
        while ((await holders('tick')).length > 0) await sleep(10);
      })(),
      5000,
      'the end of the kept key',
    );
  });

  it('grants as soon as a quorum has, without waiting for a slow node', async () => {
    let slowAnswered = false;
    const slow = aroundScripts(delayed(clients[2], 250), (send) => send().finally(() => (slowAnswered = true)));
    clients = [clients[0], clients[1], slow];
    const redlock = store({ timeout: 1000 });
    const token = newToken();
    expect(await redlock.acquire({ key: 'fast', token, ttl: 200, fencing: false })).toEqual({ acquired: true });
    // decided by the quorum before the slow node answered (an order, not a time: it holds on a busy machine)
    expect(slowAnswered).toBe(false);
    expect(await redlock.release('fast', token)).toBe(true);
    // the slow node gets the grant, then the release, in the order they were sent
    await clients[2].eval('return 1', 0);
    expect(await holders('fast')).toEqual([]);
  });
});

describe('RedlockStore in a process whose event loop stalls', () => {
  it('does not count nodes as silent that answered while its own event loop was blocked past their timeout', async () => {
    const redlock = store();
    // scripts cached: each node answers in one round trip
    await redlock.verify();
    const token = newToken();
    await redlock.acquire({ key: 'k', token, ttl: 10_000, fencing: false });
    // from a socket callback, as most requests start: the next turn of the loop runs due timers before it reads
    await clients[0].ping();
    const inspecting = redlock.inspect('k');
    const renewing = redlock.extendMany([{ key: 'k', token, ttl: 10_000 }]);
    blockEventLoop(3 * NODE_TIMEOUT);
    expect(await inspecting).toMatchObject({ held: true });
    expect(await renewing).toEqual([true]);
  });
});

describe('RedlockStore release notices', () => {
  it('wakes a waiter through the other nodes while one node is down', async () => {
    const waiterStore = store();
    const [holder, waiter] = [manager(store()), manager(waiterStore)];
    await servers[1].kill();
    const lock = await holder.acquire('busy', { ttl: 10_000 });
    // the waiter watches for notices once its first attempt was refused
    const watching = new Promise<void>((resolve) => {
      const watch = waiterStore.watch.bind(waiterStore);
      waiterStore.watch = (key) => watch(key).finally(resolve);
    });
    const started = performance.now();
    const waiting = waiter.acquire('busy', { wait: 5000, retry: { minDelay: 3000, maxDelay: 3000 } });
    await watching;
    await lock.release();
    const next = await waiting;
    expect(performance.now() - started).toBeLessThan(1500);
    await next.release();
  });
});
