import { setTimeout as sleep } from 'node:timers/promises';
import { ACQUIRE, EXTEND_MANY, RELEASE, type LuaScript } from '../../lib/stores/redis/scripts/index.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { onClient, Scenario, type ScenarioOptions } from './scenario.js';
import { within } from '../support/within.js';
import type { FaultClient } from './worker.js';

describe('network faults between the lock holders and Redis', () => {
  let server: RedisServerHandle;
  let proxy: FaultProxy;

  beforeAll(async () => {
    server = await startRedisServer();
  });

  beforeEach(async () => {
    proxy = await startFaultProxy(server.url);
  });

  afterEach(() => proxy.close());

  afterAll(() => server.stop());

  const workers = (overrides: Partial<ScenarioOptions['worker']> = {}): ScenarioOptions['worker'] => ({
    sections: 12,
    holdMs: 20,
    ttl: 1500,
    wait: 10_000,
    commandTimeout: 1000,
    ...overrides,
  });

  /**
   * Cuts the connection of the next `script` command `count` times, alternating lost requests and lost
   * replies; returns when each cut happened.
   */
  async function cutEach(script: LuaScript, count: number): Promise<number[]> {
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const when = i % 2 === 0 ? 'request' : 'reply';
      await within(proxy.cutOn(script.sha, when), 15_000, `cut ${i + 1} of a ${script.name} (${when})`);
      times.push(Date.now());
      // let the cut client reconnect before the next one
      await sleep(150);
    }
    return times;
  }

  const CUTS = 4;

  it.each<[string, FaultClient, LuaScript, Partial<ScenarioOptions['worker']>]>([
    // the lock is mostly free, so a cut acquire is mostly a grant; with a long TTL, a grant nobody holds
    // (a lost reply neither resent nor undone) would stall everyone for seconds
    ['acquire', 'ioredis', ACQUIRE, { ttl: 5000, gapMs: 150 }],
    [
      'acquire, with a client that does not resend',
      'ioredis',
      ACQUIRE,
      { ttl: 5000, gapMs: 150, maxRetriesPerRequest: 0 },
    ],
    ['release', 'ioredis', RELEASE, {}],
    // node-redis fails a command cut in flight; the store's port sends it once more, as ioredis does
    ['acquire', 'node-redis', ACQUIRE, { ttl: 5000, gapMs: 150 }],
    ['release', 'node-redis', RELEASE, {}],
    ['acquire', 'iovalkey', ACQUIRE, { ttl: 5000, gapMs: 150 }],
    ['acquire', 'glide', ACQUIRE, { ttl: 5000, gapMs: 150 }],
    // sections longer than a third of the TTL, so that every one of them is renewed (one EXTEND_MANY per batch)
    ['renewal', 'ioredis', EXTEND_MANY, { holdMs: 700, sections: 5 }],
  ])(
    'keeps one holder at a time and finishes every section when the connection is cut during %s, on %s',
    async (operation, client, script, given) => {
      const overrides = { ...given, client };
      const scenario = await Scenario.start({
        name: onClient(`connection cut during ${operation}`, client),
        processes: 3,
        lockUrl: proxy.url,
        worker: workers(overrides),
        boundMs: 45_000,
        leasesCanBeLost: false,
      });
      try {
        scenario.go();
        const cuts = await cutEach(script, CUTS);
        const outcome = await scenario.finish();
        const { sections } = outcome.report;
        // a release resent after its reply was lost finds the lease gone and reports it lost: after the section
        const lostAfter = sections.filter((s) => s.lost && s.lost.at >= (s.exitedAt ?? Infinity));
        const lostInside = sections.filter((s) => s.lost && s.lost.at < (s.exitedAt ?? Infinity));
        const stalls = cuts.map((at) => (sections.find((s) => s.enteredAt >= at)?.enteredAt ?? Infinity) - at);
        const notes = [`longest wait for the next holder after a cut: ${Math.max(...stalls)} ms`];
        if (lostAfter.length > 0) {
          notes.push(
            `${lostAfter.length} lease(s) reported lost after their section: a release resent after its reply was lost found the lease gone`,
          );
        }
        scenario.record(
          outcome,
          `${CUTS} cuts (${CUTS / 2} requests lost, ${CUTS / 2} replies lost)`,
          notes.join('; '),
        );

        expect(outcome.violations).toEqual([]);
        expect(outcome.results.map((result) => result.completed)).toEqual(Array(3).fill(workers(overrides).sections));
        // renewals retry through the cut: no lease may end while its holder is inside
        expect(lostInside).toEqual([]);
        // a grant whose reply was lost is either resent (same token) or undone, never left to block until its TTL
        if (script === ACQUIRE) expect(Math.max(...stalls)).toBeLessThan(2000);
        // a release cut with its connection is sent again, not left for its lease to run out (TTL 1500 ms)
        if (script === RELEASE) expect(Math.max(...stalls)).toBeLessThan(1000);
      } finally {
        await scenario.close();
      }
    },
  );

  it('keeps one holder at a time through 200 ms latency spikes, without a store error or a lost lease', async () => {
    const scenario = await Scenario.start({
      name: '200 ms latency spikes',
      processes: 3,
      lockUrl: proxy.url,
      worker: workers({ sections: 1000, ttl: 2000, commandTimeout: 1500, wait: 15_000 }),
      boundMs: 30_000,
      leasesCanBeLost: false,
    });
    try {
      scenario.go();
      const spikes = 5;
      for (let i = 0; i < spikes; i++) {
        proxy.latency(200);
        await sleep(1000);
        proxy.latency(0);
        await sleep(500);
      }
      scenario.stop();
      const outcome = await scenario.finish();
      scenario.record(outcome, `${spikes} spikes of 200 ms each way, 1 s long`);

      expect(outcome.violations).toEqual([]);
      expect(outcome.results.map((result) => result.errors)).toEqual([{}, {}, {}]);
      expect(outcome.results.map((result) => result.lost)).toEqual([{}, {}, {}]);
      expect(outcome.results.every((result) => result.completed > 0)).toBe(true);
    } finally {
      await scenario.close();
    }
  });
});
