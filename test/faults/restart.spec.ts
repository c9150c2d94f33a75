import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { Scenario } from './scenario.js';

describe('a Redis restart that loses every lease', () => {
  let server: RedisServerHandle;

  beforeAll(async () => {
    server = await startRedisServer();
  });

  afterAll(() => server.stop());

  it('tells the holder its lease is gone, and the fenced resource refuses it, not the next holder', async () => {
    const scenario = await Scenario.start({
      name: 'Redis restarted with a lease held',
      processes: 3,
      lockUrl: server.url,
      // sections end before their first renewal (ttl/3): only the release can learn the lease is gone;
      // they last long enough for Redis to be back by then
      worker: { sections: 3, holdMs: 1500, ttl: 6000, wait: 20_000, commandTimeout: 1000, announce: true },
      boundMs: 40_000,
      leasesCanBeLost: true,
      unfencedMustHold: false,
    });
    try {
      scenario.go();
      await scenario.entered(0, 2);
      const restartedAt = Date.now();
      await server.stop();
      await server.start();
      const outcome = await scenario.finish();
      const { sections, counter } = outcome.report;
      const straddling = sections.filter((s) => s.enteredAt < restartedAt && (s.exitedAt ?? Infinity) > restartedAt);
      const after = sections.filter((s) => s.enteredAt > restartedAt);
      scenario.record(
        outcome,
        '1 restart (data lost)',
        `unfenced counter lost ${counter.lostUpdates} update(s): without fences a restart can let two holders write`,
      );

      expect(outcome.violations).toEqual([]);
      expect(straddling.map((s) => s.sid)).toEqual(['p0:2']);
      expect(straddling.map((s) => s.lost?.reason)).toEqual(['taken']);
      expect(after.filter((s) => s.fenced !== 'accepted').map((s) => s.sid)).toEqual([]);
      expect(outcome.results.map((result) => result.completed)).toEqual([3, 3, 3]);
    } finally {
      await scenario.close();
    }
  });
});
