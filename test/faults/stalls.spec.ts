import { setTimeout as sleep } from 'node:timers/promises';
import { pauseServer, sleepServer } from '../support/faults.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { onClient, Scenario } from './scenario.js';
import type { FaultClient } from './worker.js';

const TTL = 800;

describe('stalls longer than the lease', () => {
  let server: RedisServerHandle;

  beforeAll(async () => {
    server = await startRedisServer();
  });

  afterAll(() => server.stop());

  const pause = (url: string) => pauseServer(url, 2 * TTL);
  const paused = `CLIENT PAUSE ALL for ${2 * TTL} ms`;
  it.each<[string, FaultClient, string, (url: string) => Promise<unknown>]>([
    ['paused (CLIENT PAUSE ALL)', 'ioredis', paused, pause],
    ['asleep (DEBUG SLEEP)', 'ioredis', `DEBUG SLEEP for ${2 * TTL} ms`, (url) => sleepServer(url, (2 * TTL) / 1000)],
    // no answers at all: only a client's own command timeout ends the wait
    ['paused (CLIENT PAUSE ALL)', 'node-redis', paused, pause],
    ['paused (CLIENT PAUSE ALL)', 'iovalkey', paused, pause],
    ['paused (CLIENT PAUSE ALL)', 'glide', paused, pause],
  ])(
    'tells the holder its lease is lost within its validity when the server is %s for twice the TTL, on %s',
    async (how, client, faults, stall) => {
      const scenario = await Scenario.start({
        name: onClient(`server ${how.split(' ')[0]} for 2 × TTL`, client),
        processes: 3,
        lockUrl: server.url,
        // p0 stays inside its first section until the stall is over, whatever order the workers got the lock in:
        // only renewals keep it, and those cannot get through the stall
        worker: {
          sections: 3,
          holdMs: 300,
          ttl: TTL,
          wait: 10_000,
          commandTimeout: 400,
          announce: true,
          pauseAt: 'p0:1',
          client,
        },
        boundMs: 40_000,
        leasesCanBeLost: true,
      });
      try {
        scenario.go();
        await scenario.entered(0, 1);
        const stalledAt = Date.now();
        await stall(server.url);
        await sleep(stalledAt + 2 * TTL + 200 - Date.now());
        scenario.resume(0);
        const outcome = await scenario.finish();
        // times are whole milliseconds: the section may have entered in the very millisecond the test saw it
        const caught = outcome.report.sections.filter((s) => s.enteredAt <= stalledAt && s.exitedAt! > stalledAt);
        scenario.record(outcome, `1 × ${faults}, TTL ${TTL} ms`);

        expect(outcome.violations).toEqual([]);
        expect(caught.map((s) => s.sid)).toEqual(['p0:1']);
        const [holder] = caught;
        expect(holder.lost?.reason).toBe('store-unreachable');
        // told by the end of its validity (plus a scheduling margin), not when the server came back (2 × TTL)
        expect(holder.lost!.at - holder.enteredAt).toBeLessThan(TTL + 500);
        expect(holder.unfenced).toBe('skipped');
        expect(outcome.results.map((result) => result.completed)).toEqual([3, 3, 3]);
      } finally {
        await scenario.close();
      }
    },
  );

  it('aborts the signal of a holder whose event loop is blocked past the TTL, and the resource refuses its write', async () => {
    const blockMs = 2000;
    const scenario = await Scenario.start({
      name: 'holder event loop blocked 2.5 × TTL',
      processes: 3,
      lockUrl: server.url,
      worker: { sections: 6, holdMs: 50, ttl: TTL, wait: 10_000, commandTimeout: 1000 },
      perWorker: (index) => (index === 0 ? { blockAtSection: 2, blockMs } : {}),
      boundMs: 40_000,
      leasesCanBeLost: true,
    });
    try {
      scenario.go();
      const outcome = await scenario.finish();
      const blocked = outcome.report.sections.find((s) => s.sid === 'p0:2')!;
      const during = outcome.report.sections.filter(
        (s) => s.enteredAt > blocked.enteredAt && s.enteredAt < blocked.exitedAt!,
      );
      scenario.record(outcome, `1 × event loop blocked ${blockMs} ms inside the section, TTL ${TTL} ms`);

      expect(outcome.violations).toEqual([]);
      expect(blocked.lost?.reason).toBe('stalled');
      expect(blocked.unfenced).toBe('skipped');
      expect(blocked.fenced).toBe('refused-write');
      // others took the lock while it was blocked: that is what the fence had to stop
      expect(during.length).toBeGreaterThan(0);
      expect(outcome.results.map((result) => result.completed)).toEqual([6, 6, 6]);
    } finally {
      await scenario.close();
    }
  });
});
