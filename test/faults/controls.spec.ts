import { testRedisUrl } from '../support/stores.js';
import { Scenario } from './scenario.js';

describe('the invariant checkers', () => {
  it('report lost updates, overlapping holders and repeated fences when the processes take no lock', async () => {
    const scenario = await Scenario.start({
      name: 'control: no lock taken',
      processes: 3,
      lockUrl: testRedisUrl(),
      worker: { sections: 10, holdMs: 20, ttl: 1000, wait: 0, commandTimeout: 1000, bypassLock: true },
      boundMs: 30_000,
      leasesCanBeLost: false,
    });
    try {
      scenario.go();
      const { violations, report } = await scenario.finish();
      // not a row of the fault table: this run is meant to fail, to show that the checkers can
      expect(report.counter.lostUpdates).toBeGreaterThan(0);
      expect(report.fenced.lostUpdates).toBeGreaterThan(0);
      expect(report.fenced.duplicateFences).toBe(29);
      expect(report.overlaps.length).toBeGreaterThan(0);
      expect(violations).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^unfenced counter is \d+ after 30 writes$/),
          expect.stringMatching(/^fenced value is \d+ after \d+ writes$/),
          '29 fences were granted twice',
          expect.stringMatching(/were inside at once$/),
        ]),
      );
    } finally {
      await scenario.close();
    }
  });
});
