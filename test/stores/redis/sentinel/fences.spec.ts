import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockNotAcquiredError } from '../../../../lib/errors/lock-not-acquired.error.js';
import { LockStoreError } from '../../../../lib/errors/lock-store.error.js';
import { LockManager } from '../../../../lib/core/lock-manager.js';
import { createStore } from '../../../../lib/stores/registry.js';
import { checkModuleOptions } from '../../../../lib/lock.module-options.js';
import { resourceKeys } from '../../../../lib/stores/redis/resource-keys.js';
import { startRedisSentinel, type MonitoredServer, type RedisSentinelHandle } from '../../../support/redis-sentinel.js';
import { uniquePrefix } from '../../../support/stores.js';

/** How long the master keeps granting with its replication cut before it is killed: grants no replica gets. */
const ISOLATED_MS = 300;

describe('fences across a Sentinel failover that lost the last grants', () => {
  let group: RedisSentinelHandle;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeEach(async () => {
    group = await startRedisSentinel();
  }, 60_000);

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await group?.stop();
  });

  /** A fence counter read straight from one server, past its proxy. */
  const counterOn = async (server: MonitoredServer, fenceKey: string): Promise<number> => {
    const direct = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true });
    try {
      return Number(await direct.get(fenceKey));
    } catch (error) {
      throw new Error(`the fence counter of the server on port ${server.port}: ${(error as Error).message}`, {
        cause: error,
      });
    } finally {
      direct.disconnect();
    }
  };

  it('grants every fence after the master is killed with its replication cut above every fence granted before', async () => {
    const keyPrefix = uniquePrefix();
    const fenceKey = resourceKeys(keyPrefix, 'ledger').fence;
    // two processes contending for one fenced resource, each with a Sentinel client the module creates
    const managers = await Promise.all(
      [0, 1].map(async () => {
        // friendly stacks: a command's error names the code that sent it, not only ioredis' socket handler
        const redis = { ...group.clientOptions, showFriendlyErrorStack: true };
        const plan = checkModuleOptions({ redis, keyPrefix }).store;
        const manager = new LockManager({ store: (await createStore(plan)).store });
        cleanups.push(() => manager.close());
        return manager;
      }),
    );
    const grants: Array<{ fence: number; at: number }> = [];
    let running = true;
    let stage = 'the first 50 grants';
    /** What a worker met that the store should never throw, with the stage it was in. */
    const unexpected: string[] = [];
    let granted: (() => void) | undefined;
    const grantsUntil = (count: number): Promise<void> =>
      new Promise((resolve) => (granted = () => grants.length >= count && resolve()));
    const work = async (manager: LockManager): Promise<void> => {
      while (running) {
        try {
          await manager.using(
            'ledger',
            async (lock) => {
              grants.push({ fence: lock.fence!, at: performance.now() });
              granted?.();
            },
            { fencing: true, wait: 5000, ttl: 2000 },
          );
        } catch (error) {
          // while the master is gone and no replica has taken over yet, the store is unreachable (and a
          // waiter may give up behind a lease that only the dead master could release)
          if (!(error instanceof LockStoreError || error instanceof LockNotAcquiredError)) {
            unexpected.push(`${stage}: ${(error as Error)?.stack ?? String(error)}`);
            return;
          }
          await delay(20);
        }
      }
    };
    const workers = managers.map(work);
    // a test that fails half-way still stops its workers before their managers close
    cleanups.push(async () => {
      running = false;
      await Promise.allSettled(workers);
    });

    // each stage bounded on its own, so that a run that takes too long says which stage it was in
    const within = async <T>(name: string, ms: number, work: Promise<T>): Promise<T> => {
      stage = name;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const failures = unexpected.length > 0 ? `; the workers met ${unexpected.join('; ')}` : '';
          reject(new Error(`${stage}: not done within ${ms} ms (${grants.length} grants)${failures}`));
        }, ms);
      });
      try {
        return await Promise.race([work, late]);
      } finally {
        clearTimeout(timer);
      }
    };
    await within('the first 50 grants', 30_000, grantsUntil(50));
    const master = await group.master();
    const replicas = group.servers.filter((server) => server !== master);
    group.isolate(master);
    const isolatedAt = performance.now();
    await within('a grant by the isolated master', 20_000, grantsUntil(grants.length + 1));
    await delay(Math.max(0, ISOLATED_MS - (performance.now() - isolatedAt)));
    await master.process.kill();
    const killedAt = performance.now();
    // what the replicas have now is all a promoted one will ever have of the dead master's grants
    const counters = new Map(await Promise.all(replicas.map(async (r) => [r, await counterOn(r, fenceKey)] as const)));
    const successor = await within("the Sentinels' failover", 60_000, group.waitForFailover(master));
    await within('50 grants after the failover', 30_000, grantsUntil(grants.length + 50));
    running = false;
    await Promise.all(workers);
    expect(unexpected).toEqual([]);

    const before = grants.filter((grant) => grant.at < killedAt).map((grant) => grant.fence);
    const after = grants.filter((grant) => grant.at > killedAt).map((grant) => grant.fence);
    // the scenario happened: the promoted replica's counter is behind fences the dead master granted
    expect(before.filter((fence) => fence > counters.get(successor)!).length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThanOrEqual(50);
    expect(Math.min(...after)).toBeGreaterThan(Math.max(...before));
    for (let i = 1; i < grants.length; i++) expect(grants[i].fence).toBeGreaterThan(grants[i - 1].fence);
  }, 150_000);
});
