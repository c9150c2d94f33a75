import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { FAULT_CLIENTS, onClient, Scenario } from './scenario.js';

describe.each(FAULT_CLIENTS)('a lock holder that crashes (on %s)', (client) => {
  let server: RedisServerHandle;

  beforeAll(async () => {
    server = await startRedisServer();
  });

  afterAll(() => server.stop());

  it('lets the other processes continue within the TTL after the holder is SIGKILLed mid-section', async () => {
    const ttl = 1500;
    const scenario = await Scenario.start({
      name: onClient('holder SIGKILLed mid-section', client),
      processes: 3,
      lockUrl: server.url,
      worker: { sections: 10, holdMs: 20, ttl, wait: 10_000, commandTimeout: 1000, announce: true, client },
      // the victim holds long enough that the kill lands inside its section
      perWorker: (index) => (index === 0 ? { holdMs: 400 } : {}),
      boundMs: 30_000,
      leasesCanBeLost: false,
    });
    try {
      scenario.go();
      await scenario.entered(0, 3);
      const killedAt = Date.now();
      const killedInside = await scenario.kill(0);
      const outcome = await scenario.finish();
      const next = outcome.report.sections.find((section) => section.enteredAt >= killedAt);
      const gap = next ? next.enteredAt - killedAt : Infinity;
      scenario.record(
        outcome,
        '1 SIGKILL of the holder',
        `next holder entered ${gap} ms after the kill (TTL ${ttl} ms)`,
      );

      expect(killedInside).toEqual(['p0:3']);
      expect(outcome.violations).toEqual([]);
      expect(gap).toBeLessThan(ttl + 500);
      expect(outcome.results.map((result) => result.completed)).toEqual([10, 10]);
    } finally {
      await scenario.close();
    }
  });
});
