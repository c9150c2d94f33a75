import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startPostgresServer } from '../test/support/postgres-server.js';
import { advisoryLock } from './contenders/advisory-lock.js';
import { nestjsLockShared } from './contenders/nestjs-lock.js';
import { advisoryTransactionLockPool, nestjsLockPostgres } from './contenders/postgres.js';
import type { Library, Session } from './libraries.js';
import { renderTable, type Table } from './report.js';
import { summarize } from './scenarios/contention.js';
import { contendInProcesses } from './scenarios/processes.js';
import { concurrentCycles, sequentialCycles } from './scenarios/uncontended.js';
import { BenchRedis } from './support/redis.js';
import { gitRevision, versionOf } from './support/provenance.js';
import { jainIndex, spread } from './support/stats.js';

// `npm run bench:postgres`: the Redis bench's three headline scenarios on a PostgreSQL server it starts, for this
// project's lease store, for its transaction-scoped advisory lock, for the `advisory-lock` package, and for this
// project on Redis beside them. Writes bench/results-postgres.md, keeping its hand-written "Reading the numbers"
// section (the profile behind the numbers) across reruns.

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    out: { type: 'string', default: 'bench/results-postgres.md' },
    'no-write': { type: 'boolean', default: false },
  },
});

const DURATION_MS = Number(flags.seconds) * 1000;
const WARMUP_MS = 300;
/** Contenders take turns in slices this long, so load from elsewhere on the machine falls on all alike. */
const SLICE_MS = 500;
const LOOPS = 64;
const PROCESSES = 8;
const REFERENCE = 'nestjs-lock on Postgres';
/** The heading of the hand-written section of the results file that a rerun keeps. */
const READING = '## Reading the numbers';

/** A contender of this bench: a library, the server it runs on, and its row's name. */
interface Contender {
  readonly row: string;
  readonly library: Library;
  readonly url: string;
}

/** Sessions of every contender, run `SLICE_MS` at a time in turn until each had `DURATION_MS`. */
async function interleaved<R>(
  contenders: readonly Contender[],
  run: (session: Session, contender: Contender, ms: number) => Promise<R>,
): Promise<Map<Contender, { results: R[]; cpuMs: number }>> {
  const sessions = new Map<Contender, Session>();
  const totals = new Map<Contender, { results: R[]; cpuMs: number }>();
  try {
    for (const contender of contenders) {
      sessions.set(contender, await contender.library.open(contender.url));
      totals.set(contender, { results: [], cpuMs: 0 });
    }
    for (const [contender, session] of sessions) await run(session, contender, WARMUP_MS);
    for (let round = 0; round < Math.max(1, Math.round(DURATION_MS / SLICE_MS)); round++) {
      for (const [contender, session] of sessions) {
        const total = totals.get(contender)!;
        const cpu = process.cpuUsage();
        total.results.push(await run(session, contender, SLICE_MS));
        const used = process.cpuUsage(cpu);
        total.cpuMs += (used.user + used.system) / 1000;
      }
    }
  } finally {
    await Promise.all([...sessions.values()].map((session) => session.close()));
  }
  return totals;
}

async function uncontended(contenders: readonly Contender[]): Promise<Table> {
  const totals = await interleaved(contenders, (session, contender, ms) =>
    sequentialCycles(session, `uncontended:${contender.row}`, ms),
  );
  const table: Table = {
    id: 1,
    title: 'Uncontended acquire + release latency, sequential',
    columns: [
      { key: 'p50', label: 'p50 ms' },
      { key: 'p99', label: 'p99 ms' },
      { key: 'max', label: 'max ms' },
      { key: 'cycles', label: 'cycles' },
      { key: 'cpu', label: 'client CPU µs/cycle' },
    ],
    ratioOf: 'p50',
    rows: [],
    notes: [
      `One acquire then one release per cycle, on a key nobody else wants; contenders take turns in slices of ${SLICE_MS} ms.`,
    ],
  };
  for (const [contender, { results, cpuMs }] of totals) {
    const latencies = results.flat();
    const { p50, p99, max } = spread(latencies);
    const cpu = (cpuMs * 1000) / Math.max(1, latencies.length);
    table.rows.push({ library: contender.row, values: { p50, p99, max, cycles: latencies.length, cpu } });
  }
  return table;
}

async function throughput(contenders: readonly Contender[]): Promise<Table> {
  const totals = await interleaved(contenders, (session, contender, ms) =>
    concurrentCycles(session, `loop:${contender.row}:`, LOOPS, ms),
  );
  const table: Table = {
    id: 2,
    title: `Uncontended throughput, ${LOOPS} concurrent loops on distinct keys`,
    columns: [
      { key: 'rate', label: 'cycles/s' },
      { key: 'cpu', label: 'client CPU µs/cycle' },
    ],
    ratioOf: 'rate',
    rows: [],
    notes: [
      `${LOOPS} loops of acquire + release share one session (one LockManager, one pool), each loop on its own key; ` +
        `contenders take turns in slices of ${SLICE_MS} ms.`,
    ],
  };
  for (const [contender, { results, cpuMs }] of totals) {
    const cycles = results.reduce((a, b) => a + b, 0);
    const measuredMs = results.length * SLICE_MS;
    table.rows.push({
      library: contender.row,
      values: { rate: (cycles / measuredMs) * 1000, cpu: (cpuMs * 1000) / Math.max(1, cycles) },
    });
  }
  return table;
}

async function handoffInProcesses(contenders: readonly Contender[]): Promise<Table> {
  const table: Table = {
    id: 3,
    title: `Contended hand-off, ${PROCESSES} worker processes, one key`,
    columns: [
      { key: 'rate', label: 'grants/s' },
      { key: 'gapP50', label: 'gap p50 ms' },
      { key: 'gapP99', label: 'gap p99 ms' },
      { key: 'gapMax', label: 'gap max ms' },
      { key: 'jain', label: 'Jain' },
      { key: 'cpu', label: 'client CPU µs/grant' },
      { key: 'overlaps', label: 'overlaps' },
    ],
    ratioOf: 'rate',
    rows: [],
    notes: [
      'Each worker is a forked Node process with its own session (for nestjs-lock: its own LockManager); the ' +
        'critical section is `await setTimeout(1)`. After releasing, a worker asks again only once another worker ' +
        'has taken the key (the parent relays that rule over IPC). Gap: from a holder calling release to the next ' +
        '(other) holder’s acquire resolving. Overlaps: grants that began before the previous holder called ' +
        'release (any would be a mutual-exclusion bug).',
    ],
  };
  for (const contender of contenders) {
    const options = { key: `handoff:${contender.row}`, csMs: 1, handoff: true };
    const run = await contendInProcesses(
      contender.library.name,
      contender.url,
      PROCESSES,
      options,
      DURATION_MS,
      WARMUP_MS,
      () => Promise.resolve(),
    );
    const summary = summarize([run.grants]);
    table.rows.push({
      library: contender.row,
      values: {
        rate: summary.csPerSecond,
        gapP50: summary.gap.p50,
        gapP99: summary.gap.p99,
        gapMax: summary.gap.max,
        jain: jainIndex(run.grants.map((grants) => grants.length)),
        cpu: (run.clientCpuMs * 1000) / Math.max(1, summary.grants),
        overlaps: summary.overlaps,
      },
    });
  }
  return table;
}

/** The hand-written section of the last results file, from its heading to the end ('' when there is none). */
function keptReading(file: string): string {
  try {
    const text = readFileSync(file, 'utf8');
    const at = text.indexOf(READING);
    return at < 0 ? '' : text.slice(at);
  } catch {
    return '';
  }
}

async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return rows[0].server_version;
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const loadBefore = loadavg();
  const postgres = await startPostgresServer();
  const redis = await BenchRedis.start();
  const tables: Table[] = [];
  let postgresVersion = 'unknown';
  try {
    postgresVersion = await serverVersion(postgres.url);
    const contenders: Contender[] = [
      { row: REFERENCE, library: nestjsLockPostgres, url: postgres.url },
      { row: 'advisoryTransactionLock', library: advisoryTransactionLockPool, url: postgres.url },
      { row: 'advisory-lock', library: advisoryLock, url: postgres.url },
      { row: 'nestjs-lock on Redis', library: nestjsLockShared, url: redis.url },
    ];
    for (const scenario of [uncontended, throughput, handoffInProcesses]) {
      const table = await scenario(contenders);
      tables.push(table);
      console.log(`\n${renderTable(table, [REFERENCE])}`);
    }
  } finally {
    await redis.stop();
    await postgres.destroy();
  }
  if (flags['no-write']) return;
  const own = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
  const document = [
    '# Benchmark results: PostgreSQL',
    '',
    'Written by `npm run bench:postgres`; numbers from one run on the machine below. The bench starts its own ' +
      'PostgreSQL (a fresh cluster in a temporary folder, on loopback) and its own redis-server.',
    '',
    `- date: ${new Date().toISOString()}`,
    `- cpu: ${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores`,
    `- node ${process.version}, PostgreSQL ${postgresVersion} (fsync off, as the tests run it), redis-server ${redis.version}`,
    `- nestjs-lock ${own.version} at ${gitRevision()}; pg ${versionOf('pg')}, advisory-lock ${versionOf('advisory-lock')}, ioredis ${versionOf('ioredis')}`,
    `- load average (1, 5 min) ${loadBefore[0].toFixed(2)}, ${loadBefore[1].toFixed(2)} before the run, ` +
      `${loadavg()[0].toFixed(2)}, ${loadavg()[1].toFixed(2)} after: the machine is shared, so other work may run alongside`,
    `- ${DURATION_MS / 1000} s per scenario and contender after ${WARMUP_MS} ms of warm-up`,
    '',
    '## Contenders',
    '',
    `- ${REFERENCE}: \`PostgresLockStore\` through one \`LockManager\` per process (what \`LockService\` runs), ` +
      `lease rows granted in one statement; ${nestjsLockPostgres.waiting}.`,
    `- advisoryTransactionLock: this project's transaction-scoped helper on a \`pg.Pool\` connection; ${advisoryTransactionLockPool.waiting}.`,
    `- advisory-lock: the npm package's \`lock()\`; ${advisoryLock.waiting}.`,
    `- nestjs-lock on Redis: \`RedisLockStore\` through one \`LockManager\` per process, as in bench/results.md.`,
    '',
    '## Results',
    '',
    tables.map((table) => renderTable(table, [REFERENCE])).join('\n\n'),
    '',
    keptReading(flags.out as string),
  ].join('\n');
  writeFileSync(flags.out as string, document);
  console.log(`\nwrote ${flags.out}`);
}

await main();
