import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startPgBouncer, type PgBouncerHandle } from '../support/pgbouncer-server.js';
import { startPostgresServer, type PostgresServerHandle } from '../support/postgres-server.js';
import type { SectionRecord } from '../support/invariants.js';
import { Scenario, type ScenarioOptions, type ScenarioOutcome } from './scenario.js';

/** Fences in the order their sections entered: each must be above the one before. */
function fencesOutOfOrder(sections: readonly SectionRecord[]): string[] {
  const ordered = [...sections].sort((a, b) => a.enteredAt - b.enteredAt || a.fence - b.fence);
  return ordered
    .slice(1)
    .flatMap((section, i) =>
      section.fence > ordered[i].fence ? [] : [`${section.sid} (fence ${section.fence}) after ${ordered[i].sid}`],
    );
}

describe('PostgreSQL faults under three lock holders', () => {
  let server: PostgresServerHandle;
  let bouncer: PgBouncerHandle;
  let admin: pg.Pool;

  beforeAll(async () => {
    server = await startPostgresServer();
    bouncer = await startPgBouncer(server.port);
    admin = new pg.Pool({ connectionString: server.url, max: 2 });
    admin.on('error', () => undefined);
  }, 60_000);

  afterEach(async () => {
    server.resume();
    if (!server.running) await server.start();
    if (!bouncer.running) await bouncer.start();
  });

  afterAll(async () => {
    await admin?.end();
    await bouncer?.stop();
    await server?.destroy();
  });

  /** Ends every backend of the workers (all but the admin's own), as an operator's pg_terminate_backend would. */
  const terminateBackends = async (): Promise<number> => {
    const { rows } = await admin.query(
      `SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
         AND application_name NOT LIKE 'pgbouncer%') AS ended`,
    );
    return rows[0].n as number;
  };

  const options = (
    name: string,
    worker: Partial<ScenarioOptions['worker']> = {},
    leasesCanBeLost = false,
  ): ScenarioOptions => ({
    name,
    processes: 3,
    lockUrl: '',
    worker: {
      sections: 10,
      holdMs: 100,
      ttl: 3000,
      wait: 20_000,
      commandTimeout: 2000,
      announce: true,
      pauseAt: 'p0:2',
      postgresUrl: server.url,
      ...worker,
    },
    boundMs: 60_000,
    leasesCanBeLost,
  });

  /** Runs a scenario, injecting `fault` once worker 0 is inside its second section, which it leaves a second after. */
  async function run(
    scenarioOptions: ScenarioOptions,
    fault: () => Promise<void>,
  ): Promise<{ outcome: ScenarioOutcome; scenario: Scenario; faultedAt: number }> {
    const scenario = await Scenario.start(scenarioOptions);
    try {
      scenario.go();
      await scenario.entered(0, 2, 30_000);
      const faultedAt = Date.now();
      await fault();
      await sleep(1000);
      scenario.resume(0);
      return { outcome: await scenario.finish(), scenario, faultedAt };
    } finally {
      await scenario.close();
    }
  }

  /** What every scenario must show: no violation, no lost update, fences in order, every worker done. */
  const expectSafe = (outcome: ScenarioOutcome, sections = 10): void => {
    expect(outcome.violations).toEqual([]);
    expect(outcome.report.counter.lostUpdates).toBe(0);
    expect(outcome.report.fenced.lostUpdates).toBe(0);
    expect(fencesOutOfOrder(outcome.report.sections)).toEqual([]);
    expect(outcome.results.map((result) => result.completed)).toEqual(outcome.results.map(() => sections));
  };

  it('lets the others continue within the TTL after the holder is SIGKILLed mid-section', async () => {
    const ttl = 1500;
    const scenario = await Scenario.start({
      ...options('postgres: holder SIGKILLed mid-section', { ttl, pauseAt: undefined }),
      perWorker: (index) => (index === 0 ? { holdMs: 400 } : {}),
    });
    try {
      scenario.go();
      await scenario.entered(0, 3);
      const killedAt = Date.now();
      expect(await scenario.kill(0)).toEqual(['p0:3']);
      const outcome = await scenario.finish();
      const next = outcome.report.sections.find((section) => section.enteredAt >= killedAt);
      const gap = next ? next.enteredAt - killedAt : Infinity;
      scenario.record(
        outcome,
        '1 SIGKILL of the holder',
        `next holder entered ${gap} ms after the kill (TTL ${ttl} ms)`,
      );
      expect(outcome.violations).toEqual([]);
      expect(gap).toBeLessThan(ttl + 500);
      expect(outcome.results.map((result) => result.completed)).toEqual([10, 10]);
    } finally {
      await scenario.close();
    }
  });

  it('keeps the lease when every backend of the store is terminated mid-hold: it lives in a row, not a session', async () => {
    let ended = 0;
    const { outcome, scenario } = await run(options('postgres: pg_terminate_backend mid-hold'), async () => {
      ended = await terminateBackends();
    });
    scenario.record(outcome, `pg_terminate_backend of ${ended} backends mid-hold`);
    expect(ended).toBeGreaterThan(0);
    expectSafe(outcome);
  });

  it('keeps one holder at a time when the backends are terminated again and again while others acquire', async () => {
    let ended = 0;
    const { outcome, scenario } = await run(
      options('postgres: pg_terminate_backend mid-acquire', { pauseAt: undefined, sections: 15, holdMs: 30 }),
      async () => {
        for (let i = 0; i < 5; i++) {
          ended += await terminateBackends();
          await sleep(150);
        }
      },
    );
    scenario.record(outcome, `5 rounds of pg_terminate_backend (${ended} backends) mid-acquire`);
    expectSafe(outcome, 15);
  });

  it('keeps the lease across a restart of PostgreSQL mid-hold (fast shutdown, then start), or tells its holder', async () => {
    const { outcome, scenario } = await run(
      options('postgres: server restarted mid-hold', { ttl: 6000 }, true),
      async () => {
        await server.stop();
        await server.start();
      },
    );
    scenario.record(outcome, '1 restart of PostgreSQL');
    expectSafe(outcome);
  });

  it('tells a holder frozen past its TTL that its lease is lost, and the resource refuses its write', async () => {
    const ttl = 800;
    const blockMs = 2000;
    const scenario = await Scenario.start({
      ...options('postgres: holder frozen past its TTL', { ttl, pauseAt: undefined, sections: 6, holdMs: 50 }, true),
      perWorker: (index) => (index === 0 ? { blockAtSection: 2, blockMs } : {}),
    });
    try {
      scenario.go();
      const outcome = await scenario.finish();
      const blocked = outcome.report.sections.find((s) => s.sid === 'p0:2')!;
      scenario.record(outcome, `event loop of the holder blocked ${blockMs} ms (TTL ${ttl} ms)`);
      expect(outcome.violations).toEqual([]);
      expect(blocked.lost?.reason).toBe('stalled');
      expect(blocked.fenced).toBe('refused-write');
      expect(fencesOutOfOrder(outcome.report.sections)).toEqual([]);
      expect(outcome.results.map((result) => result.completed)).toEqual([6, 6, 6]);
    } finally {
      await scenario.close();
    }
  });

  it('survives statements cut by statement_timeout while the table is locked, or tells the holder', async () => {
    await admin.query("ALTER ROLE postgres SET statement_timeout = '300ms'");
    try {
      const { outcome, scenario } = await run(options('postgres: statement timeouts', {}, true), async () => {
        const client = await admin.connect();
        try {
          await client.query('BEGIN');
          await client.query("SET LOCAL statement_timeout = '0'");
          await client.query('LOCK TABLE public.nestjs_lock IN ACCESS EXCLUSIVE MODE');
          await sleep(1000);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      });
      scenario.record(outcome, 'table locked 1 s, statement_timeout 300 ms');
      expectSafe(outcome);
    } finally {
      await admin.query('ALTER ROLE postgres RESET statement_timeout');
    }
  });

  it('keeps one holder at a time through PgBouncer when the pooler is restarted mid-hold', async () => {
    const { outcome, scenario } = await run(
      options('postgres: PgBouncer restarted mid-hold', { postgresUrl: bouncer.url }, true),
      async () => {
        await bouncer.kill();
        await sleep(300);
        await bouncer.start();
      },
    );
    scenario.record(outcome, '1 SIGKILL and restart of PgBouncer');
    expectSafe(outcome);
  });
});
