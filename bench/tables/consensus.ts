import { Redis } from 'ioredis';
import { EtcdLockStore, LockManager, LockNotAcquiredError, RedisLockStore } from '../../lib/index.js';
import type { LockStore } from '../../lib/store.js';
import { startEtcdCluster } from '../../test/support/etcd-cluster.js';
import type { BenchContext, Scenario } from '../context.js';
import { TTL } from '../contenders/contender.js';
import type { Held, Session } from '../libraries.js';
import type { Table } from '../report.js';
import { contendInProcess, summarize, type Grant } from '../scenarios/contention.js';
import { concurrentCycles, sequentialCycles } from '../scenarios/uncontended.js';
import { spread } from '../support/stats.js';

/** Workers of the hand-off, and loops of the throughput run, as in scenarios 3 and 2. */
const WORKERS = 8;
const LOOPS = 64;
const TITLE = 'The price of consensus: nestjs-lock on Redis and on a 3-member etcd cluster';

/** One nestjs-lock LockManager on a store, as a bench session. */
async function managerSession(store: LockStore, ttl: number): Promise<Session> {
  const manager = new LockManager({ store, ttl, wait: 10_000 });
  await manager.verify();
  const session: Session = {
    retries: 0,
    async acquire(key: string): Promise<Held> {
      for (;;) {
        try {
          const lock = await manager.acquire(key);
          return { release: async () => void (await lock.release()) };
        } catch (error) {
          if (!(error instanceof LockNotAcquiredError)) throw error;
          session.retries++;
        }
      }
    },
    close: () => manager.close(),
  };
  return session;
}

/**
 * Scenario 10: the price of consensus. nestjs-lock on the bench's Redis and on a 3-member etcd cluster the bench
 * starts (on this machine: every write is agreed by two of three members and written to their disks), in the
 * uncontended cycle, uncontended throughput and the in-process hand-off, one after the other.
 */
export const consensusPrice: Scenario = { id: 10, title: TITLE, run };

async function run(context: BenchContext): Promise<Table> {
  const options = {
    durationMs: context.durationMs,
    warmupMs: context.warmupMs,
    workers: WORKERS,
    loops: LOOPS,
    ttl: TTL,
    redisUrl: context.redis.url,
  };
  const table: Table = {
    id: 10,
    title: TITLE,
    columns: [
      { key: 'p50', label: 'uncontended p50 ms' },
      { key: 'p99', label: 'uncontended p99 ms' },
      { key: 'rate', label: `${options.loops} loops cycles/s` },
      { key: 'handoff', label: 'hand-off CS/s' },
      { key: 'gapP50', label: 'hand-off gap p50 ms' },
      { key: 'gapP99', label: 'hand-off gap p99 ms' },
    ],
    rows: [],
    notes: [
      'Same engine, two stores. Uncontended: acquire then release on a key nobody else wants (sequential), then ' +
        `${options.loops} concurrent loops on distinct keys; hand-off: ${options.workers} workers in one process, one ` +
        'key, 1 ms critical section, one LockManager (as scenario 3).',
      'etcd: 3 members on this machine (etcd-server from Debian, data in a temporary folder on disk, heartbeat ' +
        '200 ms, election 1.2 s); a grant is a keep-alive of a lease kept from an earlier grant (or a lease grant) ' +
        'plus one transaction, a release one transaction, each transaction agreed by a quorum and fsynced. Redis: ' +
        'one server, no persistence.',
    ],
  };
  const cluster = await startEtcdCluster(3);
  try {
    const stores: Array<[string, () => LockStore]> = [
      ['nestjs-lock on Redis', () => new RedisLockStore({ client: new Redis(options.redisUrl), ownsClient: true })],
      ['nestjs-lock on etcd (3 members)', () => new EtcdLockStore({ hosts: cluster.hosts })],
    ];
    for (const [name, make] of stores) {
      const session = await managerSession(make(), options.ttl);
      // one LockManager shared by every worker, as one Nest app has one LockService
      const workers = Array.from({ length: options.workers }, () => session);
      try {
        await sequentialCycles(session, `consensus:warm:${name}`, options.warmupMs);
        const latencies = await sequentialCycles(session, `consensus:sequential:${name}`, options.durationMs);
        const cycles = await concurrentCycles(session, `consensus:loop:${name}:`, options.loops, options.durationMs);
        const handoff = { key: `consensus:handoff:${name}`, csMs: 1, handoff: true };
        await contendInProcess(workers, handoff, options.warmupMs);
        const runs: Grant[][][] = [await contendInProcess(workers, handoff, options.durationMs)];
        const summary = summarize(runs);
        const { p50, p99 } = spread(latencies);
        table.rows.push({
          library: name,
          values: {
            p50,
            p99,
            rate: (cycles / options.durationMs) * 1000,
            handoff: summary.csPerSecond,
            gapP50: summary.gap.p50,
            gapP99: summary.gap.p99,
          },
        });
      } finally {
        await session.close();
      }
    }
  } finally {
    await cluster.stop();
  }
  return table;
}
