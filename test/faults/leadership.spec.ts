import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { Scenario } from './scenario.js';

describe('a leader that crashes', () => {
  let server: RedisServerHandle;

  beforeAll(async () => {
    server = await startRedisServer();
  });

  afterAll(() => server.stop());

  it('lets another process lead within the TTL, with a higher term, after the leader is SIGKILLed mid-term', async () => {
    const ttl = 1500;
    const scenario = await Scenario.start({
      name: 'leader SIGKILLed mid-term',
      processes: 3,
      lockUrl: server.url,
      worker: { lead: true, sections: 8, holdMs: 20, ttl, wait: ttl, commandTimeout: 1000, announce: true },
      // the victim's terms last long enough that the kill lands inside one
      perWorker: (index) => (index === 0 ? { holdMs: 400 } : {}),
      boundMs: 60_000,
      leasesCanBeLost: false,
    });
    try {
      scenario.go();
      await scenario.entered(0, 2, 30_000);
      const killedAt = Date.now();
      const killedInside = await scenario.kill(0);
      const outcome = await scenario.finish();
      const { sections } = outcome.report;
      const killedTerm = sections.find((section) => section.sid === 'p0:2')!;
      const next = sections.find((section) => section.enteredAt >= killedAt && section !== killedTerm);
      const gap = next ? next.enteredAt - killedAt : Infinity;
      const resigned = outcome.results.reduce((sum, result) => sum + result.resigned, 0);
      scenario.record(
        outcome,
        '1 SIGKILL of the leader',
        `next leader ${gap} ms after the kill (TTL ${ttl} ms); ${resigned} terms resigned, not counted as lost`,
      );

      expect(killedInside).toEqual(['p0:2']);
      expect(outcome.violations).toEqual([]);
      expect(gap).toBeLessThan(ttl + 500);
      expect(next!.fence).toBeGreaterThan(killedTerm.fence);
      const fences = sections.map((section) => section.fence);
      for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
      expect(outcome.results.map((result) => result.completed)).toEqual([8, 8]);
      expect(outcome.results.every((result) => Object.keys(result.lost).length === 0)).toBe(true);
    } finally {
      await scenario.close();
    }
  });
});
