import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  FLOOR_POLL_MS,
  LIBRARIES,
  floor,
  nestjsLockPerWorker,
  nestjsLockShared,
  nestjsLockUsing,
  redisSemaphore,
  redlock,
  type Library,
  type Session,
} from './libraries.js';
import { renderTable, renderTargets, type Table } from './report.js';
import { contendInProcess, summarize, type ContentionOptions, type Grant } from './scenarios/contention.js';
import { ENDPOINTS, load, redisRoundTrips, sequentialRequests, startApp, type BenchApp } from './scenarios/http.js';
import { contendInProcesses } from './scenarios/processes.js';
import { HOLDERS, settle } from './scenarios/renewal.js';
import { concurrentCycles, sequentialCycles } from './scenarios/uncontended.js';
import { judgeTargets } from './targets.js';
import { BenchRedis, commandDelta, describePer, type CommandCounts } from './support/redis.js';
import { fmt, spread } from './support/stats.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    only: { type: 'string' },
    libs: { type: 'string' },
    out: { type: 'string', default: 'bench/results.md' },
    'no-write': { type: 'boolean', default: false },
  },
});

/** Length of every measured loop, per scenario and contender. */
const DURATION = Number(flags.seconds) * 1000;
const WARMUP = 300;
const SLICE_LATENCY = 250;
const SLICE_THROUGHPUT = 500;
const SLICE_CONTENTION = 1000;
const WORKERS = 8;
const LOOPS = 64;
const LEASES = 10_000;
const HTTP_CONNECTIONS = 16;
const RENEW_TTL = 3000;
const handoff: ContentionOptions = { key: 'contended', csMs: 1, handoff: true };
const greedy: ContentionOptions = { key: 'contended', csMs: 1, handoff: false };

const only = flags.only ? new Set(flags.only.split(',').map(Number)) : undefined;
const onlyLibs = flags.libs ? new Set(flags.libs.split(',')) : undefined;
const wanted = (scenario: number): boolean => !only || only.has(scenario);
const among = <T extends { name: string }>(list: readonly T[]): T[] =>
  list.filter((item) => !onlyLibs || onlyLibs.has(item.name));

/** Scenarios in the order they run. */
const SCENARIOS: ReadonlyArray<{ id: number; title: string; run: () => Promise<Table> }> = [
  { id: 1, title: 'Uncontended acquire + release latency, sequential', run: uncontendedLatency },
  { id: 2, title: `Uncontended throughput, ${LOOPS} concurrent loops on distinct keys`, run: uncontendedThroughput },
  { id: 3, title: `Contended handoff, ${WORKERS} workers in one process, one key`, run: () => contention(3, handoff) },
  { id: 4, title: `Greedy contention, ${WORKERS} workers re-acquiring at once`, run: () => contention(4, greedy) },
  { id: 5, title: `Contended handoff, ${WORKERS} worker processes, one key`, run: processHandoff },
  { id: 6, title: 'Redis commands per successful acquisition', run: commandsPerAcquisition },
  { id: 7, title: `${LEASES.toLocaleString('en-US')} held leases under auto-renewal`, run: renewal },
  { id: 8, title: 'HTTP: the same Nest endpoint undecorated and with @WithLock', run: http },
];

let redis: BenchRedis;
/** Commands per acquisition measured along the way, for scenario 6: scenario → library → counts. */
const commandsSeen = new Map<number, Map<string, { perAcquisition: number; breakdown: string }>>();

function recordCommands(
  scenario: number,
  library: string,
  delta: { total: number; byCommand: CommandCounts },
  acquisitions: number,
) {
  if (!commandsSeen.has(scenario)) commandsSeen.set(scenario, new Map());
  commandsSeen.get(scenario)?.set(library, {
    perAcquisition: delta.total / acquisitions,
    breakdown: describePer(delta.byCommand, acquisitions),
  });
}

async function counted<T>(run: () => Promise<T>): Promise<{ result: T; delta: ReturnType<typeof commandDelta> }> {
  const before = await redis.commandCounts();
  const result = await run();
  const delta = commandDelta(before, await redis.commandCounts());
  return { result, delta };
}

/** What one contender did over all its slices of an interleaved run. */
interface SliceTotals {
  count: number;
  clientCpuMs: number;
  serverCpuMs: number;
  commands: { total: number; byCommand: CommandCounts };
}

/**
 * Runs every contender in turn, `SLICE` ms at a time, until each had `DURATION` ms: load from anything else on
 * the machine then falls on all of them alike. Client CPU is this process's, server CPU redis-server's.
 */
async function interleaved(
  libraries: readonly Library[],
  sliceMs: number,
  run: (session: Session, library: Library, ms: number) => Promise<number>,
): Promise<Map<Library, SliceTotals>> {
  await redis.reset();
  const sessions = new Map<Library, Session>();
  for (const library of libraries) sessions.set(library, await library.open(redis.url));
  const totals = new Map<Library, SliceTotals>(
    libraries.map((library) => [
      library,
      { count: 0, clientCpuMs: 0, serverCpuMs: 0, commands: { total: 0, byCommand: {} } },
    ]),
  );
  try {
    for (const [library, session] of sessions) await run(session, library, WARMUP);
    for (let round = 0; round < Math.max(1, Math.round(DURATION / sliceMs)); round++) {
      for (const [library, session] of sessions) {
        const total = totals.get(library) as SliceTotals;
        const commandsBefore = await redis.commandCounts();
        const serverBefore = await redis.cpuSeconds();
        const clientBefore = process.cpuUsage();
        total.count += await run(session, library, sliceMs);
        const client = process.cpuUsage(clientBefore);
        total.clientCpuMs += (client.user + client.system) / 1000;
        total.serverCpuMs += ((await redis.cpuSeconds()) - serverBefore) * 1000;
        const delta = commandDelta(commandsBefore, await redis.commandCounts());
        total.commands.total += delta.total;
        for (const [name, calls] of Object.entries(delta.byCommand)) {
          total.commands.byCommand[name] = (total.commands.byCommand[name] ?? 0) + calls;
        }
      }
    }
  } finally {
    await Promise.all([...sessions.values()].map((session) => session.close()));
  }
  return totals;
}

const UNCONTENDED = (): Library[] => among([floor, nestjsLockShared, nestjsLockUsing, redlock, redisSemaphore]);

async function uncontendedLatency(): Promise<Table> {
  const table: Table = {
    id: 1,
    title: SCENARIOS[0].title,
    columns: [
      { key: 'p50', label: 'p50 ms' },
      { key: 'p99', label: 'p99 ms' },
      { key: 'max', label: 'max ms' },
      { key: 'cycles', label: 'cycles' },
      { key: 'clientCpu', label: 'client CPU µs/cycle' },
      { key: 'serverCpu', label: 'server CPU µs/cycle' },
    ],
    ratioOf: 'p50',
    rows: [],
    notes: [
      'One acquire then one release per cycle, on a key nobody else wants; one client per contender. Contenders ' +
        `take turns in slices of ${SLICE_LATENCY} ms so that other load on the machine falls on all alike.`,
    ],
  };
  const latencies = new Map<Library, number[]>();
  const totals = await interleaved(UNCONTENDED(), SLICE_LATENCY, async (session, library, ms) => {
    const sample = await sequentialCycles(session, `sequential:${library.name}`, ms);
    if (ms !== WARMUP) latencies.set(library, [...(latencies.get(library) ?? []), ...sample]);
    return sample.length;
  });
  for (const [library, total] of totals) {
    recordCommands(1, library.name, total.commands, total.count);
    table.rows.push({
      library: library.name,
      values: {
        ...spread(latencies.get(library) ?? []),
        cycles: total.count,
        clientCpu: (total.clientCpuMs * 1000) / total.count,
        serverCpu: (total.serverCpuMs * 1000) / total.count,
      },
    });
  }
  return table;
}

async function uncontendedThroughput(): Promise<Table> {
  const table: Table = {
    id: 2,
    title: SCENARIOS[1].title,
    columns: [
      { key: 'rate', label: 'cycles/s' },
      { key: 'clientCpu', label: 'client CPU µs/cycle' },
      { key: 'serverCpu', label: 'server CPU µs/cycle' },
    ],
    ratioOf: 'rate',
    rows: [],
    notes: [
      `${LOOPS} loops of acquire + release share one client (one LockManager), each loop on its own key; ` +
        `contenders take turns in slices of ${SLICE_THROUGHPUT} ms.`,
    ],
  };
  const totals = await interleaved(UNCONTENDED(), SLICE_THROUGHPUT, (session, library, ms) =>
    concurrentCycles(session, `loop:${library.name}:`, LOOPS, ms),
  );
  for (const [library, total] of totals) {
    table.rows.push({
      library: library.name,
      values: {
        rate: (total.count / DURATION) * 1000,
        clientCpu: (total.clientCpuMs * 1000) / total.count,
        serverCpu: (total.serverCpuMs * 1000) / total.count,
      },
    });
  }
  return table;
}

function contentionTable(id: number, title: string, isHandoff: boolean): Table {
  const columns = isHandoff
    ? [
        { key: 'rate', label: 'CS/s' },
        { key: 'gapP50', label: 'gap p50 ms' },
        { key: 'gapP99', label: 'gap p99 ms' },
        { key: 'gapMax', label: 'gap max ms' },
        { key: 'jain', label: 'Jain' },
        { key: 'retries', label: 'give-ups' },
        { key: 'overlaps', label: 'overlaps' },
      ]
    : [
        { key: 'rate', label: 'CS/s' },
        { key: 'waitP50', label: 'wait p50 ms' },
        { key: 'waitP99', label: 'wait p99 ms' },
        { key: 'waitMax', label: 'wait max ms' },
        { key: 'jain', label: 'Jain' },
        { key: 'self', label: 'self re-takes %' },
        { key: 'gapP50', label: 'gap p50 ms' },
        { key: 'retries', label: 'give-ups' },
        { key: 'overlaps', label: 'overlaps' },
      ];
  return { id, title, columns, ratioOf: 'rate', rows: [], notes: [] };
}

function contentionRow(library: string, runs: Grant[][][], retries: number) {
  const s = summarize(runs, DURATION);
  return {
    summary: s,
    row: {
      library,
      values: {
        rate: s.csPerSecond,
        gapP50: s.gap.p50,
        gapP99: s.gap.p99,
        gapMax: s.gap.max,
        waitP50: s.wait.p50,
        waitP99: s.wait.p99,
        waitMax: s.wait.max,
        jain: s.jain,
        self: (s.selfHandoffs / Math.max(1, s.grants)) * 100,
        retries,
        overlaps: s.overlaps,
        csMean: s.csMean,
      },
    },
  };
}

function contentionNotes(table: Table, csMean: number[], isHandoff: boolean): void {
  table.notes.push(
    `Critical section: \`await setTimeout(1)\`, measured ${fmt(Math.min(...csMean))}–${fmt(Math.max(...csMean))} ms on average, ` +
      `so no contender can pass ${fmt(1000 / Math.min(...csMean))} CS/s.`,
    isHandoff
      ? 'Handoff rule: after releasing, a worker asks again only once another worker has taken the key. ' +
          'Gap: from the moment a holder calls release to the moment the next (other) holder’s acquire resolves.'
      : 'Greedy: a worker asks again right after its release returns. Wait: from calling acquire to holding the key ' +
          '(library give-ups retried by the bench count as waiting). Jain index over per-worker grant counts.',
    'Overlaps: grants that began before the previous holder called release; any would be a mutual-exclusion bug.',
    ...among(LIBRARIES).map((library) => `${library.name}: ${library.waiting}.`),
  );
}

async function contention(id: number, options: ContentionOptions): Promise<Table> {
  const table = contentionTable(id, SCENARIOS[id - 1].title, options.handoff);
  const libraries = among(LIBRARIES);
  await redis.reset();
  const opened = new Map<Library, Session[]>();
  for (const library of libraries) {
    const own: Session[] = [];
    while (own.length < (library.shared ? 1 : WORKERS)) own.push(await library.open(redis.url));
    opened.set(library, own);
  }
  const workersOf = (library: Library): Session[] =>
    Array.from({ length: WORKERS }, (_, i) => (opened.get(library) as Session[])[library.shared ? 0 : i]);
  const runs = new Map<Library, Grant[][][]>(libraries.map((library) => [library, []]));
  const commands = new Map<Library, { total: number; byCommand: CommandCounts }>(
    libraries.map((library) => [library, { total: 0, byCommand: {} }]),
  );
  const retriesBefore = new Map(libraries.map((library) => [library, 0]));
  try {
    for (const library of libraries) {
      const mine = { ...options, key: `contended:${library.name}` };
      await contendInProcess(workersOf(library), mine, WARMUP);
      retriesBefore.set(library, sum(workersOf(library)));
    }
    for (let round = 0; round < Math.max(1, Math.round(DURATION / SLICE_CONTENTION)); round++) {
      for (const library of libraries) {
        const mine = { ...options, key: `contended:${library.name}` };
        const { result, delta } = await counted(() => contendInProcess(workersOf(library), mine, SLICE_CONTENTION));
        runs.get(library)?.push(result);
        const total = commands.get(library) as { total: number; byCommand: CommandCounts };
        total.total += delta.total;
        for (const [name, calls] of Object.entries(delta.byCommand)) {
          total.byCommand[name] = (total.byCommand[name] ?? 0) + calls;
        }
      }
    }
  } finally {
    for (const sessions of opened.values()) await Promise.all(sessions.map((session) => session.close()));
  }
  const csMean: number[] = [];
  for (const library of libraries) {
    const retries = sum(workersOf(library)) - (retriesBefore.get(library) ?? 0);
    const { summary, row } = contentionRow(library.name, runs.get(library) ?? [], retries);
    recordCommands(
      id,
      library.name,
      commands.get(library) as { total: number; byCommand: CommandCounts },
      summary.grants,
    );
    csMean.push(summary.csMean);
    table.rows.push(row);
  }
  contentionNotes(table, csMean, options.handoff);
  table.notes.push(`Contenders take turns in slices of ${SLICE_CONTENTION} ms, each on its own key.`);
  if (!options.handoff) return table;
  table.notes.push(
    'nestjs-lock: one LockManager shared by the 8 workers (one per process, as a Nest app has); ' +
      'nestjs-lock/per-worker: one LockManager and connection per worker, so waiters meet across clients ' +
      'through release notices and the hand-off window.',
  );
  return table;
}

function sum(sessions: readonly Session[]): number {
  return [...new Set(sessions)].reduce((total, session) => total + session.retries, 0);
}

async function processHandoff(): Promise<Table> {
  const table = contentionTable(5, SCENARIOS[4].title, true);
  const csMean: number[] = [];
  for (const library of among([floor, nestjsLockShared, redlock, redisSemaphore])) {
    await redis.reset();
    let before: CommandCounts = {};
    const run = await contendInProcesses(library.name, redis.url, WORKERS, handoff, DURATION, async () => {
      before = await redis.commandCounts();
    });
    const delta = commandDelta(before, await redis.commandCounts());
    const { summary, row } = contentionRow(library.name, [run.grants], run.retries);
    recordCommands(5, library.name, delta, summary.grants);
    csMean.push(summary.csMean);
    table.rows.push(row);
  }
  contentionNotes(table, csMean, true);
  table.notes.push(
    'Each worker is a forked Node process with its own session (for nestjs-lock: its own LockManager). ' +
      'The parent only relays the handoff rule over IPC; no warm-up.',
  );
  return table;
}

async function commandsPerAcquisition(): Promise<Table> {
  const columns = [
    { key: 's1', label: 'uncontended (1)' },
    { key: 's3', label: 'handoff (3)' },
    { key: 's4', label: 'greedy (4)' },
    { key: 's5', label: 'handoff, processes (5)' },
  ];
  const table: Table = {
    id: 6,
    title: SCENARIOS[5].title,
    columns,
    ratioOf: 's3',
    rows: [],
    notes: [
      'INFO commandstats deltas over the measured run divided by the grants in it. Redis counts the commands a Lua ' +
        'script runs as well as the EVALSHA that runs it; SUBSCRIBE/UNSUBSCRIBE of waiters count too.',
    ],
  };
  for (const library of among([
    floor,
    nestjsLockShared,
    nestjsLockUsing,
    nestjsLockPerWorker,
    redlock,
    redisSemaphore,
  ])) {
    const values: Record<string, number> = {};
    for (const scenario of [1, 3, 4, 5]) {
      const seen = commandsSeen.get(scenario)?.get(library.name);
      if (seen) values[`s${scenario}`] = seen.perAcquisition;
    }
    if (Object.keys(values).length) table.rows.push({ library: library.name, values });
  }
  for (const scenario of [1, 3, 5]) {
    for (const [library, seen] of commandsSeen.get(scenario) ?? []) {
      table.notes.push(`(${scenario}) ${library}: ${seen.breakdown}`);
    }
  }
  return table;
}

async function renewal(): Promise<Table> {
  const table: Table = {
    id: 7,
    title: SCENARIOS[6].title,
    columns: [
      { key: 'setup', label: 'take all, s' },
      { key: 'evalsha', label: 'EVALSHA sent/s' },
      { key: 'commands', label: 'server commands/s' },
      { key: 'pipelines', label: 'pipelines/s' },
      { key: 'lagP99', label: 'loop lag p99 ms' },
      { key: 'lagMax', label: 'loop lag max ms' },
      { key: 'lost', label: 'lost' },
    ],
    rows: [],
    notes: [
      `${LEASES.toLocaleString('en-US')} leases of ${RENEW_TTL} ms, one client per contender; measured over ` +
        `${(2 * RENEW_TTL) / 1000} s after one TTL of settling. Loop lag: monitorEventLoopDelay (10 ms resolution) ` +
        'minus the 10 ms it samples at. Expected for batched renewal at ttl/3 in batches of 500: ' +
        `${fmt(LEASES / (RENEW_TTL / 3000))} lease renewals/s in ${fmt(LEASES / (RENEW_TTL / 3000) / 500)} requests/s. ` +
        'Server commands count those run inside scripts (GET and PEXPIRE per lease).',
      ...among(HOLDERS).map((holder) => `${holder.name}: ${holder.renewal}.`),
      'redis-semaphore starts each refresh interval when its acquire reply is handled; with 10,000 taken at once ' +
        'the replies come up to a second after the SET, so with a 3 s lockTimeout (its default is 10 s) a refresh ' +
        'can come after the key expired, and it then reports the lock lost.',
    ],
  };
  for (const holder of among(HOLDERS)) {
    await redis.reset();
    const started = performance.now();
    const holding = await holder.hold(redis.url, LEASES, RENEW_TTL);
    const setup = (performance.now() - started) / 1000;
    try {
      await settle(RENEW_TTL);
      const lag = monitorEventLoopDelay({ resolution: 10 });
      const pipelinesBefore = holding.pipelines();
      const before = await redis.commandCounts();
      lag.enable();
      await sleep(2 * RENEW_TTL);
      lag.disable();
      const delta = commandDelta(before, await redis.commandCounts());
      const seconds = (2 * RENEW_TTL) / 1000;
      table.rows.push({
        library: holder.name,
        values: {
          setup,
          evalsha: (delta.byCommand.evalsha ?? 0) / seconds,
          commands: delta.total / seconds,
          pipelines: (holding.pipelines() - pipelinesBefore) / seconds,
          lagP99: Math.max(0, lag.percentile(99) / 1e6 - 10),
          lagMax: Math.max(0, lag.max / 1e6 - 10),
          lost: holding.lost(),
        },
      });
    } finally {
      await holding.release();
    }
  }
  return table;
}

async function http(): Promise<Table> {
  const table: Table = {
    id: 8,
    title: SCENARIOS[7].title,
    columns: [
      { key: 'p50', label: 'p50 ms' },
      { key: 'p99', label: 'p99 ms' },
      { key: 'added', label: 'added p50 ms' },
      { key: 'rate', label: `req/s, ${HTTP_CONNECTIONS} connections` },
      { key: 'non2xx', label: 'non-2xx' },
    ],
    rows: [],
    notes: [
      "POST /items/:id/plain and POST /items/:id/locked (`@WithLock('bench:item:<id>')`) on one Nest app per " +
        'platform, LockModule.forRoot({ redis }) on the bench’s Redis; a new id per request, so every lock is free ' +
        '(what the decorator costs, not contention).',
      `Latency: sequential requests on one keep-alive connection, endpoints taking turns in slices of ${SLICE_LATENCY} ms ` +
        '(autocannon keeps whole milliseconds only). Added: this row’s p50 minus the undecorated p50 of its platform. ' +
        'Redis PING: sequential round trips in the same slices, the unit of the target.',
      `req/s: autocannon, ${HTTP_CONNECTIONS} connections, ${DURATION / 2000} s per endpoint, after the latency run.`,
    ],
  };
  await redis.reset();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const apps: BenchApp[] = [];
  const latencies = new Map<string, number[]>();
  const record = (name: string, sample: number[]) => latencies.set(name, [...(latencies.get(name) ?? []), ...sample]);
  try {
    for (const platform of ['express', 'fastify'] as const) apps.push(await startApp(platform, redis.url));
    for (const app of apps) for (const endpoint of ENDPOINTS) await sequentialRequests(app, endpoint, WARMUP, agent);
    for (let round = 0; round < Math.max(1, Math.round(DURATION / SLICE_LATENCY)); round++) {
      for (const app of apps) {
        for (const endpoint of ENDPOINTS) {
          record(`${app.platform} ${endpoint}`, await sequentialRequests(app, endpoint, SLICE_LATENCY, agent));
        }
      }
      record('ping', await redisRoundTrips(redis.url, SLICE_LATENCY / 2));
    }
    for (const app of apps) {
      const plainP50 = spread(latencies.get(`${app.platform} plain`) ?? []).p50;
      for (const endpoint of ENDPOINTS) {
        const { p50, p99 } = spread(latencies.get(`${app.platform} ${endpoint}`) ?? []);
        const loaded = await load(app, endpoint, HTTP_CONNECTIONS, DURATION / 2000);
        table.rows.push({
          library: `${app.platform}, ${endpoint === 'plain' ? 'undecorated' : '@WithLock'}`,
          values: {
            p50,
            p99,
            ...(endpoint === 'locked' ? { added: p50 - plainP50 } : {}),
            rate: loaded.requestsPerSecond,
            non2xx: loaded.non2xx + loaded.errors,
          },
        });
      }
    }
    const ping = spread(latencies.get('ping') ?? []);
    table.rows.push({ library: 'Redis PING', values: { p50: ping.p50, p99: ping.p99 } });
  } finally {
    agent.destroy();
    await Promise.all(apps.map((app) => app.close()));
  }
  return table;
}

function versionOf(name: string): string {
  try {
    return (JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function gitRevision(): string {
  try {
    const revision = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', 'lib'], { encoding: 'utf8' }).trim();
    return dirty ? `${revision} + uncommitted changes in lib/` : revision;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0];
  redis = await BenchRedis.start();
  const tables: Table[] = [];
  try {
    for (const scenario of SCENARIOS) {
      if (!wanted(scenario.id)) continue;
      console.error(`running ${scenario.id}. ${scenario.title}`);
      const table = await scenario.run();
      tables.push(table);
      console.log(`\n${renderTable(table)}`);
    }
  } finally {
    await redis.stop();
  }
  const targets = judgeTargets(tables, { leases: LEASES, ttl: RENEW_TTL });
  const targetText = renderTargets(targets);
  console.log(`\n## Targets\n\n${targetText}`);
  if (flags['no-write']) return;
  const own = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
  const machine = [
    `- date: ${new Date().toISOString()}`,
    `- cpu: ${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores`,
    `- node ${process.version}, redis-server ${redis.version} (local, loopback, no persistence)`,
    `- nestjs-lock ${own.version} at ${gitRevision()}; ioredis ${versionOf('ioredis')}, redlock ${versionOf('redlock')}, ` +
      `redis-semaphore ${versionOf('redis-semaphore')}`,
    `- load average (1 min) ${loadBefore.toFixed(2)} before the run, ${loadavg()[0].toFixed(2)} after: the machine ` +
      'is shared, so other work may run alongside',
    `- ${DURATION / 1000} s per scenario and contender after ${WARMUP} ms of warm-up; floor waits by polling every ` +
      `${FLOOR_POLL_MS} ms`,
  ];
  const document = [
    '# Benchmark results',
    '',
    'Written by `npm run bench`; numbers from one run on the machine below. Every contender runs against the same ' +
      'local redis-server that the bench starts on a free port, one contender at a time, the keyspace flushed between runs.',
    '',
    ...machine,
    '',
    '## Results',
    '',
    tables.map(renderTable).join('\n\n'),
    '',
    '## Targets',
    '',
    targetText,
    '',
  ].join('\n');
  writeFileSync(flags.out as string, document);
  console.log(`\nwrote ${flags.out}`);
}

await main();
