import { setTimeout as sleep } from 'node:timers/promises';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { FAULT_CLIENTS, onClient, Scenario } from './scenario.js';

describe.each(FAULT_CLIENTS)('a Redis restart that loses every lease (on %s)', (client) => {
  let server: RedisServerHandle;

  beforeAll(async () => {
    server = await startRedisServer();
  });

  afterAll(() => server.stop());

  it('tells the holder its lease is gone, and the fenced resource refuses it, not the next holder', async () => {
    const scenario = await Scenario.start({
      name: onClient('Redis restarted with a lease held', client),
      processes: 3,
      lockUrl: server.url,
      // p0 stays inside its first section until Redis is back and another worker is in: a holder that
      // straddles the restart whatever order the workers got the lock in; the others go on until stopped
      worker: {
        sections: 1000,
        holdMs: 100,
        ttl: 6000,
        wait: 20_000,
        commandTimeout: 1000,
        announce: true,
        pauseAt: 'p0:1',
        client,
      },
      boundMs: 40_000,
      leasesCanBeLost: true,
      unfencedMustHold: false,
    });
    try {
      scenario.go();
      await scenario.entered(0, 1);
      const restartedAt = Date.now();
      await server.stop();
      await server.start();
      // Redis forgot the lease: another worker takes the key while p0 is still inside
      await scenario.inside(2);
      // and writes with its higher fence before p0 goes on (inside counts from its entry, before its writes)
      await scenario.othersLeft('p0:1');
      scenario.resume(0);
      // p0 leaves (its fenced write refused, its release finding the lease gone) and everyone goes on a while
      await scenario.entered(0, 2);
      await sleep(500);
      scenario.stop();
      const outcome = await scenario.finish();
      const { sections, counter } = outcome.report;
      // times are whole milliseconds: the section may have entered in the very millisecond the test saw it
      const straddling = sections.filter((s) => s.enteredAt <= restartedAt && (s.exitedAt ?? Infinity) > restartedAt);
      const after = sections.filter((s) => s.enteredAt > restartedAt);
      scenario.record(
        outcome,
        '1 restart (data lost)',
        `unfenced counter lost ${counter.lostUpdates} update(s): without fences a restart can let two holders write`,
      );

      expect(outcome.violations).toEqual([]);
      expect(straddling.map((s) => [s.sid, s.fenced, s.lost?.reason])).toEqual([['p0:1', 'refused-write', 'taken']]);
      expect(after.length).toBeGreaterThan(3);
      expect(after.filter((s) => s.fenced !== 'accepted').map((s) => s.sid)).toEqual([]);
      // every worker got the lock at least once: nobody starved or stalled across the restart
      expect(outcome.results.map((result) => result.completed >= 1)).toEqual([true, true, true]);
    } finally {
      await scenario.close();
    }
  });
});
