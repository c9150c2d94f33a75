import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { LockConfigurationError } from '../../../../lib/errors/lock-configuration.error.js';
import { LockStoreError } from '../../../../lib/errors/lock-store.error.js';
import { LockManager } from '../../../../lib/core/lock-manager.js';
import { MemoryLockStore } from '../../../../lib/stores/memory/memory.store.js';
import { RedisLockStore, type RedisLockStoreOptions } from '../../../../lib/stores/redis/redis.store.js';
import { checkModuleOptions } from '../../../../lib/lock.module-options.js';
import { resourceKeys } from '../../../../lib/stores/redis/resource-keys.js';
import { newToken } from '../../../../lib/utils/token.js';
import { sleepServer } from '../../../support/faults.js';
import { startRedisServer, type RedisServerHandle } from '../../../support/redis-server.js';
import { uniquePrefix } from '../../../support/stores.js';
import { storedToken } from '../../../support/stored-token.js';

const ACK = { replicas: 1, timeout: 200 };

describe('replicaAck on a standalone master with one replica', () => {
  let master: RedisServerHandle;
  let replica: RedisServerHandle;
  let replicaDir: string;
  let admin: Redis;
  let onReplica: Redis;
  let keyPrefix: string;
  const cleanups: Array<() => unknown> = [];

  const connect = (url: string): Redis => {
    const client = new Redis(url, { commandTimeout: 2000, maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    cleanups.push(() => client.quit().catch(() => client.disconnect()));
    return client;
  };
  const store = (options: Partial<RedisLockStoreOptions> = {}): RedisLockStore => {
    const created = new RedisLockStore({ client: connect(master.url), keyPrefix, replicaAck: ACK, ...options });
    cleanups.push(() => created.close());
    return created;
  };
  const manager = (lockStore: RedisLockStore): LockManager => {
    const created = new LockManager({ store: lockStore });
    cleanups.push(() => created.close());
    return created;
  };
  const lockKey = (key: string): string => resourceKeys(keyPrefix, key).lock;

  beforeAll(async () => {
    master = await startRedisServer(['--repl-diskless-sync-delay', '0']);
    replicaDir = await mkdtemp(join(tmpdir(), 'nestjs-lock-replica-'));
    replica = await startRedisServer(['--replicaof', '127.0.0.1', String(master.port)], undefined, {
      dir: replicaDir,
    });
    admin = new Redis(master.url);
    onReplica = new Redis(replica.url);
    // after a full sync Redis 7 streams writes to the replica only once it has sent its first ACK (up to 1 s):
    // until then no WAIT can be satisfied, so wait for one to be
    for (let i = 0; ; i++) {
      await admin.set('replica-ack:probe', String(i));
      if (Number(await admin.call('WAIT', 1, 100)) === 1) break;
      if (i > 100) throw new Error('the replica did not acknowledge a write within 10 s');
    }
  });

  afterAll(async () => {
    await Promise.all([admin?.quit(), onReplica?.quit()]);
    await replica?.stop();
    await master?.stop();
    await rm(replicaDir, { recursive: true, force: true });
  });

  beforeEach(() => {
    keyPrefix = uniquePrefix();
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('grants once the replica holds the lease, so the replica has the token the moment acquire resolves', async () => {
    const token = newToken();
    expect(await store().acquire({ key: 'acked', token, ttl: 10_000, fencing: true })).toEqual({
      acquired: true,
      fence: expect.any(Number),
    });
    // no wait, no poll: WAIT already saw the replica take the write
    expect(await onReplica.get(lockKey('acked'))).toBe(token);
  });

  it('takes the grant back and fails with LockStoreError when the replica does not acknowledge in time', async () => {
    const lockStore = store();
    const asleep = await sleepServer(replica.url, 1.5);
    const started = performance.now();
    const error = await lockStore
      .acquire({ key: 'unacked', token: newToken(), ttl: 10_000, fencing: false })
      .catch((caught: unknown) => caught);
    const elapsed = performance.now() - started;
    await asleep.awake;

    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toBe(
      'Lock store failed to acquire: only 0 of 1 replicas acknowledged the grant within 200 ms ' +
        '(option replicaAck); it was released, since a failover now could hand the lock to a second holder',
    );
    expect(elapsed).toBeGreaterThanOrEqual(190);
    // it gave up at the WAIT timeout, not when the replica woke
    expect(elapsed).toBeLessThan(1200);
    expect(await admin.exists(lockKey('unacked'))).toBe(0);
    // the failure was the replica's, not contention: the key is free for the next caller
    expect((await lockStore.acquire({ key: 'unacked', token: newToken(), ttl: 1000, fencing: false })).acquired).toBe(
      true,
    );
  });

  it('reports an unacknowledged grant through LockManager as LockStoreError, never as a held lock', async () => {
    const locks = manager(store());
    const asleep = await sleepServer(replica.url, 1);
    const error = await locks.acquire('managed').catch((caught: unknown) => caught);
    await asleep.awake;
    expect(error).toBeInstanceOf(LockStoreError);
    expect(locks.heldCount).toBe(0);
    expect(await admin.exists(lockKey('managed'))).toBe(0);
  });

  it.each([
    ['a lease', {}],
    ["a reader's permit", { mode: 'read' as const }],
  ])(
    'does not count a renewal of %s the replica did not acknowledge: extend() fails, the validity stays',
    async (_what, shape) => {
      const locks = manager(store());
      const lock = await locks.acquire('renewed', { ttl: 10_000, ...shape });
      const validBefore = lock.validUntil;
      const asleep = await sleepServer(replica.url, 1);
      const error = await lock.extend(20_000).catch((caught: unknown) => caught);
      await asleep.awake;

      expect(error).toBeInstanceOf(LockStoreError);
      expect((error as Error).message).toMatch(/only 0 of 1 replicas acknowledged the renewal within 200 ms/);
      expect(lock.validUntil).toBe(validBefore);
      expect(lock.signal.aborted).toBe(false);
      await lock.extend(20_000);
      expect(lock.validUntil).toBeGreaterThan(validBefore);
      expect(await onReplica.pttl(lockKey('renewed'))).toBeGreaterThan(15_000);
      expect(await lock.release()).toBe(true);
    },
  );

  it('grants a permit only once the replica took it, and takes it back when the replica does not in time', async () => {
    const locks = manager(store());
    const asleep = await sleepServer(replica.url, 1);
    const error = await locks.acquire('pool', { limit: 1 }).catch((caught: unknown) => caught);
    await asleep.awake;
    // without: granted on the master alone, which a failover could lose while its holder runs
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/only 0 of 1 replicas acknowledged the permit within 200 ms/);
    expect(locks.heldCount).toBe(0);
    // taken back: the semaphore's only permit is free
    const permit = await locks.acquire('pool', { limit: 1, wait: 0 });
    expect((await locks.inspect('pool')).holders).toBe(1);
    // a waiter is let in by the release (no direct grant before a WAIT), and its permit is on the replica
    const waiting = locks.acquire('pool', { limit: 1, wait: 5000 });
    setTimeout(() => void permit.release(), 100);
    const next = await waiting;
    expect(await onReplica.exists(`${lockKey('pool')}:permit-info`)).toBe(1);
    await next.release();
  });

  it('keeps auto-renewed leases alive while the replica keeps up (one WAIT per renewal batch)', async () => {
    const locks = manager(store());
    const held = await Promise.all(
      Array.from({ length: 20 }, (_, i) => locks.acquire(`batch:${i}`, { ttl: 300, autoRenew: true })),
    );
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(held.every((lock) => lock.isHeld)).toBe(true);
    const onTheReplica = await Promise.all(
      held.map(async (lock) => storedToken(await onReplica.get(lockKey(lock.key)))),
    );
    expect(onTheReplica).toEqual(held.map((lock) => lock.token));
    await locks.releaseAll(held);
  });

  it('is refused by a master without replicas: a replica count it cannot reach is never a grant', async () => {
    const lonely = await startRedisServer();
    try {
      const client = new Redis(lonely.url, { commandTimeout: 2000 });
      const lockStore = new RedisLockStore({
        client,
        keyPrefix,
        replicaAck: { replicas: 1, timeout: 50 },
        ownsClient: true,
      });
      const error = await lockStore
        .acquire({ key: 'alone', token: newToken(), ttl: 1000, fencing: false })
        .catch((caught: unknown) => caught);
      expect((error as Error).message).toMatch(/only 0 of 1 replicas acknowledged the grant within 50 ms/);
      await lockStore.close();
    } finally {
      await lonely.stop();
    }
  });
});

describe('replicaAck option', () => {
  const client = (options = {}) => new Redis({ lazyConnect: true, ...options });

  it.each<[string, unknown, string]>([
    ['no replicas', { replicas: 0, timeout: 50 }, 'replicaAck.replicas'],
    ['a fraction of a replica', { replicas: 1.5, timeout: 50 }, 'replicaAck.replicas'],
    ['a replica count as a string', { replicas: '1', timeout: 50 }, 'replicaAck.replicas'],
    ['a zero timeout (WAIT 0 blocks forever)', { replicas: 1, timeout: 0 }, 'replicaAck.timeout'],
    ['a negative timeout', { replicas: 1, timeout: -5 }, 'replicaAck.timeout'],
    ['a missing timeout', { replicas: 1 }, 'replicaAck.timeout'],
    ['a number instead of an object', 1, 'replicaAck'],
    ['an array', [1, 50], 'replicaAck'],
  ])('refuses %s at construction with LockConfigurationError naming the field', (_label, replicaAck, option) => {
    const error = (() => {
      try {
        new RedisLockStore({ client: client(), replicaAck: replicaAck as RedisLockStoreOptions['replicaAck'] });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as LockConfigurationError).option).toBe(option);
  });

  it("accepts a duration string, and refuses a timeout the client's commandTimeout would cut short", () => {
    expect(() => new RedisLockStore({ client: client(), replicaAck: { replicas: 2, timeout: '50ms' } })).not.toThrow();
    expect(
      () => new RedisLockStore({ client: client({ commandTimeout: 500 }), replicaAck: { replicas: 1, timeout: '1s' } }),
    ).toThrow(
      'Invalid nestjs-lock option "replicaAck.timeout": got the string "1s"; expected less than the client\'s commandTimeout (500 ms), or the client gives up on WAIT before Redis answers.',
    );
  });

  it('is refused by the module without "redis", or beside a store of your own', () => {
    expect(() => checkModuleOptions({ replicaAck: { replicas: 1, timeout: 50 } })).toThrow(LockConfigurationError);
    expect(() =>
      checkModuleOptions({ store: new MemoryLockStore(), replicaAck: { replicas: 1, timeout: 50 } }),
    ).toThrow(/set it on your own store instead/);
    // the module's own client gives up on a command after 2 s: a longer WAIT could never be answered
    expect(() =>
      checkModuleOptions({ redis: 'redis://127.0.0.1:1', replicaAck: { replicas: 1, timeout: '5s' } }),
    ).toThrow(/commandTimeout \(2000 ms\)/);
  });
});
