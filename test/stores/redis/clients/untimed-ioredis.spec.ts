import { Cluster, Redis } from 'ioredis';
import { Redis as Valkey } from 'iovalkey';
import { LockManager } from '../../../../lib/core/lock-manager.js';
import { LockStoreError } from '../../../../lib/errors/lock-store.error.js';
import { UNTIMED_CLIENT_COMMAND_TIMEOUT } from '../../../../lib/stores/redis/client/bounded-ioredis-port.js';
import { toClientPort } from '../../../../lib/stores/redis/client/client-port.js';
import { RedisLockStore } from '../../../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../../../lib/stores/redis/resource-keys.js';
import { startRedisCluster, type RedisClusterHandle } from '../../../support/redis-cluster.js';
import { startRedisServer, type RedisServerHandle } from '../../../support/redis-server.js';
import { uniquePrefix } from '../../../support/stores.js';
import { failureOf } from '../../../support/timed-outcome.js';

/** How long past the bound a failure may take to surface on a loaded machine. */
const SLACK = 3000;

/** The pid of the server `client` talks to, from its own INFO. */
async function serverPid(client: Redis | Valkey): Promise<number> {
  return Number(/process_id:(\d+)/.exec(await client.info('server'))![1]);
}

describe.each([
  ['ioredis', (url: string) => new Redis(url, { maxRetriesPerRequest: 1 })],
  ['iovalkey', (url: string) => new Valkey(url, { maxRetriesPerRequest: 1 }) as unknown as Redis],
])('a RedisLockStore on an %s client of yours without commandTimeout, its server frozen (SIGSTOP)', (_, connect) => {
  let server: RedisServerHandle;
  let client: Redis;
  let manager: LockManager;

  beforeAll(async () => {
    server = await startRedisServer();
  });

  afterAll(() => server.stop());

  beforeEach(async () => {
    client = connect(server.url);
    client.on('error', () => undefined);
    manager = new LockManager({ store: new RedisLockStore({ client, keyPrefix: uniquePrefix() }) });
    // connected and checked (the store's check runs before the first acquisition) before the freeze
    await (await manager.acquire('warm-up')).release();
  });

  afterEach(async () => {
    server.resume();
    await manager.close();
    client.disconnect();
  });

  it('fails every call with LockStoreError within the bound, where it would have waited for ever', async () => {
    const held = await manager.acquire('held', { ttl: 30_000 });
    server.pause();
    const operations: Array<[string, () => Promise<unknown>]> = [
      ['acquire with a wait', () => manager.acquire('free', { ttl: 5000, wait: 10_000 })],
      ['tryAcquire', () => manager.tryAcquire('other', { ttl: 5000 })],
      ['extend', () => held.extend(30_000)],
      ['release', () => held.release()],
      ['inspect', () => manager.inspect('held')],
    ];
    const outcomes = await Promise.all(
      operations.map(async ([name, operation]) => {
        const { error, took } = await failureOf(operation);
        return {
          name,
          error: (error as Error).constructor.name,
          inTime: took < UNTIMED_CLIENT_COMMAND_TIMEOUT + SLACK,
        };
      }),
    );
    expect(outcomes).toEqual(operations.map(([name]) => ({ name, error: 'LockStoreError', inTime: true })));
    const { error } = await failureOf(() => manager.inspect('held'));
    expect((error as LockStoreError).message).toContain(`no answer within ${UNTIMED_CLIENT_COMMAND_TIMEOUT} ms`);
  });

  it('leaves your own commands on the client as you set them: unbounded', async () => {
    // a blocking pop of 3 s on the client itself, as an application's worker would: the store's bound of 2 s
    // is the store's, on its own commands, and must not cut it
    const popped = failureOf(() => client.blpop(`${uniquePrefix()}empty`, 3));
    const { error, took } = await popped;
    expect(error).toEqual({ resolved: null });
    expect(took).toBeGreaterThan(UNTIMED_CLIENT_COMMAND_TIMEOUT);
  });

  it('takes a client with its own commandTimeout as it is', () => {
    const timed = connect(server.url);
    timed.options.commandTimeout = 500;
    try {
      expect(toClientPort(timed, 'client')).toBe(timed);
      expect(toClientPort(client, 'client')).not.toBe(client);
      expect(toClientPort(client, 'client').options.commandTimeout).toBe(UNTIMED_CLIENT_COMMAND_TIMEOUT);
    } finally {
      timed.disconnect();
    }
  });
});

describe('a RedisLockStore on an ioredis Cluster of yours without commandTimeout, one master frozen', () => {
  let cluster: RedisClusterHandle;

  beforeAll(async () => {
    // no replica, and a node timeout longer than the freeze: the other masters must not declare the Cluster
    // down (CLUSTERDOWN on every slot) nor fail the frozen one over while it is frozen
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0, nodeTimeout: 5000 });
  }, 60_000);

  afterAll(() => cluster.stop());

  it("fails the frozen master's keys within the bound and serves the others", async () => {
    const client = new Cluster(cluster.startupNodes, { redisOptions: { maxRetriesPerRequest: 1 } });
    client.on('error', () => undefined);
    const keyPrefix = uniquePrefix();
    const manager = new LockManager({ store: new RedisLockStore({ client, keyPrefix }) });
    const masterOf = (key: string) => cluster.masterForKey(resourceKeys(keyPrefix, key).lock);
    const frozenPort = await masterOf('frozen');
    let otherKey = 'other:0';
    for (let index = 1; (await masterOf(otherKey)) === frozenPort; index++) otherKey = `other:${index}`;
    const node = new Redis(frozenPort, '127.0.0.1');
    const pid = await serverPid(node);
    node.disconnect();
    await (await manager.acquire('frozen')).release();
    process.kill(pid, 'SIGSTOP');
    try {
      const [frozen, other] = await Promise.all([
        failureOf(() => manager.acquire('frozen', { ttl: 5000, wait: 10_000 })),
        manager.acquire(otherKey, { ttl: 5000 }),
      ]);
      expect(frozen.error).toBeInstanceOf(LockStoreError);
      expect(frozen.took).toBeLessThan(UNTIMED_CLIENT_COMMAND_TIMEOUT + SLACK);
      expect(await other.release()).toBe(true);
    } finally {
      process.kill(pid, 'SIGCONT');
      await manager.close();
      client.disconnect();
    }
  });
});
