import { setTimeout as sleep } from 'node:timers/promises';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { Scenario } from './scenario.js';

/** Resolves once `check` holds, asking every 50 ms (for what only a worker process changes). */
async function until(check: () => Promise<boolean>, timeout: number, what: string): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeout} ms`);
    await sleep(50);
  }
}

describe('permits of one key under faults', () => {
  let server: RedisServerHandle;

  beforeAll(async () => {
    server = await startRedisServer();
  });

  afterAll(() => server.stop());

  it('keeps at most 3 holders of a semaphore inside, and frees the places of SIGKILLed holders by their TTL', async () => {
    const ttl = 1500;
    const scenario = await Scenario.start({
      name: 'semaphore (limit 3), 3 holders SIGKILLed',
      processes: 6,
      lockUrl: server.url,
      worker: {
        sections: 8,
        holdMs: 50,
        ttl,
        wait: 15_000,
        commandTimeout: 1000,
        announce: true,
        permits: { limit: 3 },
      },
      // the victims stay inside their second section until killed: then they hold every place at once
      perWorker: (index) => (index < 3 ? { pauseAt: `p${index}:2` } : {}),
      boundMs: 40_000,
      leasesCanBeLost: false,
    });
    try {
      scenario.go();
      await Promise.all([0, 1, 2].map((index) => scenario.entered(index, 2)));
      const killedAt = Date.now();
      const killedInside = await Promise.all([0, 1, 2].map((index) => scenario.kill(index)));
      const outcome = await scenario.finish();
      const { sections, mostInside } = outcome.census;
      const next = sections.find((section) => section.enteredAt >= killedAt);
      const gap = next ? next.enteredAt - killedAt : Infinity;
      scenario.record(
        outcome,
        '3 SIGKILLs of holders (every place held)',
        `next holder entered ${gap} ms after the kills (TTL ${ttl} ms); at most ${mostInside.permit} inside`,
      );

      expect(killedInside).toEqual([['p0:2'], ['p1:2'], ['p2:2']]);
      expect(outcome.violations).toEqual([]);
      expect(mostInside.permit).toBe(3);
      expect(gap).toBeLessThan(ttl + 500);
      expect(outcome.results.map((result) => result.completed)).toEqual([8, 8, 8]);
    } finally {
      await scenario.close();
    }
  });

  it('tells a writer that straddles a Redis restart its permit is gone before it leaves, while readers and writers go on', async () => {
    const scenario = await Scenario.start({
      name: 'readers-writer (80% readers), Redis restarted with a writer inside',
      processes: 5,
      lockUrl: server.url,
      // p0 writes, and stays inside its first section until Redis is back, another worker is in and p0 was
      // told; the others read 4 times in 5 and go on until stopped
      worker: {
        sections: 1000,
        holdMs: 50,
        ttl: 6000,
        wait: 20_000,
        commandTimeout: 1000,
        announce: true,
        pauseAt: 'p0:1',
        permits: { writeShare: 0.2 },
      },
      perWorker: (index) => (index === 0 ? { permits: { writeShare: 1 } } : {}),
      boundMs: 40_000,
      leasesCanBeLost: true,
    });
    try {
      scenario.go();
      await scenario.entered(0, 1);
      const restartedAt = Date.now();
      await server.stop();
      await server.start();
      // Redis forgot the writer's permit: others take the key while p0 is still inside
      await scenario.inside(2);
      // p0's renewal finds its permit gone: its signal aborts while it is inside
      await until(
        async () => (await scenario.census.report()).sections.some((s) => s.sid === 'p0:1' && s.lost),
        10_000,
        'the lost signal of p0:1',
      );
      scenario.resume(0);
      await scenario.entered(0, 2);
      await sleep(500);
      scenario.stop();
      const outcome = await scenario.finish();
      const { sections, crowds, mostInside } = outcome.census;
      const straddling = sections.filter((s) => s.enteredAt <= restartedAt && (s.exitedAt ?? Infinity) > restartedAt);
      const after = sections.filter((s) => s.enteredAt > restartedAt);
      const writer = sections.find((s) => s.sid === 'p0:1');
      const toldBefore = writer?.lost && writer.exitedAt ? `${writer.exitedAt - writer.lost.at} ms` : 'never';
      scenario.record(
        outcome,
        '1 restart (data lost)',
        `${crowds.length} entries beside the writer that Redis forgot, told ${toldBefore} before it left; up to ${mostInside.read} readers at once`,
      );

      expect(outcome.violations).toEqual([]);
      expect(straddling.map((s) => [s.sid, s.kind, (s.lost?.at ?? Infinity) < s.exitedAt!])).toEqual([
        ['p0:1', 'write', true],
      ]);
      expect(crowds.length).toBeGreaterThan(0);
      expect(after.filter((s) => s.kind === 'write').length).toBeGreaterThan(1);
      expect(mostInside.read).toBeGreaterThan(1);
      expect(outcome.results.map((result) => result.completed >= 1)).toEqual([true, true, true, true, true]);
    } finally {
      await scenario.close();
    }
  });

  it('never lets a mutex holder beside a permit holder of the same key, when the mutex holder is SIGKILLed', async () => {
    const ttl = 1500;
    const scenario = await Scenario.start({
      name: 'mutex and semaphore (limit 3) on one key, mutex holder SIGKILLed',
      processes: 4,
      lockUrl: server.url,
      // a third of the sections take the key's mutex, the rest a permit; p0 takes only the mutex, and stays
      // inside its second section until killed
      worker: {
        sections: 12,
        holdMs: 30,
        ttl,
        wait: 15_000,
        commandTimeout: 1000,
        announce: true,
        permits: { limit: 3, mutexShare: 0.3 },
      },
      perWorker: (index) => (index === 0 ? { pauseAt: 'p0:2', permits: { limit: 3, mutexShare: 1 } } : {}),
      boundMs: 40_000,
      leasesCanBeLost: false,
    });
    try {
      scenario.go();
      await scenario.entered(0, 2);
      const killedAt = Date.now();
      const killedInside = await scenario.kill(0);
      const outcome = await scenario.finish();
      const { sections, mostInside } = outcome.census;
      const next = sections.find((section) => section.enteredAt >= killedAt);
      const gap = next ? next.enteredAt - killedAt : Infinity;
      const kinds = (kind: string) => sections.filter((s) => s.kind === kind).length;
      scenario.record(
        outcome,
        '1 SIGKILL of the mutex holder',
        `${kinds('mutex')} mutex and ${kinds('permit')} permit sections; next holder entered ${gap} ms after the kill (TTL ${ttl} ms)`,
      );

      expect(killedInside).toEqual(['p0:2']);
      expect(outcome.violations).toEqual([]);
      expect(kinds('mutex')).toBeGreaterThan(2);
      expect(mostInside.permit).toBeGreaterThan(1);
      expect(gap).toBeLessThan(ttl + 500);
      expect(outcome.results.map((result) => result.completed)).toEqual([12, 12, 12]);
    } finally {
      await scenario.close();
    }
  });
});
