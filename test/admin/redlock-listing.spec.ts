import { Redis } from 'ioredis';
import { LockManager } from '../../lib/core/lock-manager.js';
import { forceRelease } from '../../lib/listing/force-release.js';
import { listLocks } from '../../lib/listing/lock-listing.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { RedlockStore } from '../../lib/stores/redlock/redlock.store.js';
import { RedisServerPool, redlock3Kind, redlockServers, uniquePrefix } from '../support/stores.js';
import type { RedisServerHandle } from '../support/redis-server.js';
import { describeListingContract } from './lock-listing.contract.js';

beforeAll(() => redlockServers.servers(3));
afterAll(() => redlockServers.stop());

describeListingContract(redlock3Kind, { permits: false });

describe('listing on Redlock when nodes disagree', () => {
  const pool = new RedisServerPool();
  let servers: RedisServerHandle[];
  let keyPrefix: string;
  let stores: RedlockStore[];

  beforeAll(async () => {
    servers = await pool.servers(3);
  });
  afterAll(() => pool.stop());

  beforeEach(() => {
    keyPrefix = uniquePrefix();
    stores = [];
  });
  afterEach(async () => {
    // a killed node comes back first: the stores' connections to it then close as they would in production
    for (const server of servers) if (!server.running) await server.start();
    await Promise.all(stores.map((store) => store.close()));
  });

  const store = (): RedlockStore => {
    const created = new RedlockStore({ nodes: servers.map((server) => server.url), keyPrefix, timeout: 1000 });
    stores.push(created);
    return created;
  };

  it('leaves out a lease copy that only one node holds: no quorum holds it', async () => {
    const admin = new Redis(servers[2].url);
    try {
      await admin.set(resourceKeys(keyPrefix, 'stale').lock, 'ab12', 'PX', 30_000);
      expect((await listLocks(store())).locks).toEqual([]);
    } finally {
      await admin.quit();
    }
  });

  it('lists a lock held on a quorum while the first node is down, and force-releases it with a higher fence', async () => {
    const manager = new LockManager({ store: store(), closeStore: false });
    try {
      const lock = await manager.acquire('held', { ttl: 30_000, fencing: true, label: 'Job.run' });
      await servers[0].kill();
      const operator = store();
      const { locks } = await listLocks(operator);
      expect(locks.map((listed) => [listed.key, listed.holders[0]?.label])).toEqual([['held', 'Job.run']]);
      const forced = await forceRelease(operator, 'held', { by: 'ops', showKey: true });
      expect(forced.ended).toBe(1);
      expect(forced.fence).toBeGreaterThan(lock.fence as number);
      const next = await manager.acquire('held', { ttl: 30_000, fencing: true });
      expect(next.fence).toBeGreaterThan(forced.fence);
      await next.release();
    } finally {
      await manager.close();
    }
  });

  it('refuses to list with fewer answering nodes than a quorum, naming the silent ones', async () => {
    const operator = store();
    await operator.verify();
    await Promise.all([servers[0].kill(), servers[1].kill()]);
    const failure = listLocks(operator);
    await expect(failure).rejects.toThrow(/no quorum was reachable/);
    const message = ((await failure.catch((error: unknown) => error)) as Error).message;
    expect(message).toContain(`:${servers[0].port}`);
    expect(message).toContain(`:${servers[1].port}`);
    expect(message).not.toContain(`:${servers[2].port}`);
  });
});
