import type { BenchContext, Scenario } from '../context.js';
import { PERMIT_LIBRARIES, type PermitAsk, type PermitLibrary, type PermitSession } from '../contenders/permits.js';
import type { Table } from '../report.js';
import {
  permitsInProcess,
  summarizeReadersWriter,
  summarizeSemaphore,
  type PermitRun,
  type PermitRunOptions,
} from '../scenarios/permits.js';
import { interleaved, type SliceTotals } from '../support/interleave.js';
import { fmt } from '../support/stats.js';
import { WORKERS } from './contention-table.js';

/** The semaphore's limit in scenario 11. */
const LIMIT = 3;
/** Share of sections that ask for a write permit in scenario 12. */
const WRITE_SHARE = 0.1;
const CS_MS = 1;
const SLICE_MS = 1000;

/** The retries all distinct sessions of a contender have counted so far. */
const retriesOf = (sessions: readonly PermitSession[]): number =>
  [...new Set(sessions)].reduce((total, session) => total + session.retries, 0);

/** `WORKERS` workers of this process, each with its own session or all with one (a shared contender). */
async function openWorkers(library: PermitLibrary, url: string): Promise<PermitSession[]> {
  const own: PermitSession[] = [];
  while (own.length < (library.shared ? 1 : WORKERS)) own.push(await library.open(url));
  return Array.from({ length: WORKERS }, (_, i) => own[library.shared ? 0 : i]);
}

interface SliceResult {
  readonly run: PermitRun;
  readonly retries: number;
}

/** How scenario 11 or 12 runs: its key prefix, section, limit, and what each contender's workers ask for. */
interface PermitPlan extends Omit<PermitRunOptions, 'draw'> {
  readonly limit: number | undefined;
  /** The draws of one contender's workers (each contender gets its own, made once). */
  drawFor(library: PermitLibrary): PermitRunOptions['draw'];
}

/** Every contender of `libraries` in turn, in slices, `WORKERS` workers of this process on one key each. */
function runPermits(
  context: BenchContext,
  libraries: readonly PermitLibrary[],
  plan: PermitPlan,
): Promise<Map<PermitLibrary, SliceTotals<SliceResult>>> {
  const draws = new Map(libraries.map((library) => [library, plan.drawFor(library)]));
  return interleaved(context, libraries, {
    sliceMs: SLICE_MS,
    open: (library) => openWorkers(library, context.redis.url),
    close: async (workers) => void (await Promise.all([...new Set(workers)].map((session) => session.close()))),
    async run(workers, library, ms) {
      const before = retriesOf(workers);
      const options = {
        key: `${plan.key}:${library.name}`,
        csMs: plan.csMs,
        draw: draws.get(library) ?? plan.drawFor(library),
      };
      const run = await permitsInProcess(workers, options, plan.limit, ms);
      return { run, retries: retriesOf(workers) - before };
    },
    count: (result) => result.run.grants.flat().length,
  });
}

/** A loud note for a table whose rule some grant broke (or a quiet one that says none did). */
function violationNote(table: Table, rule: string, violations: Map<string, number>): void {
  const broken = [...violations].filter(([, count]) => count > 0);
  if (broken.length === 0) {
    table.notes.push(`No grant broke the rule (${rule}) in any run.`);
    return;
  }
  process.exitCode = 1;
  table.notes.unshift(
    `**VIOLATION: ${broken.map(([name, count]) => `${name} ${count}×`).join(', ')} broke the rule (${rule}); ` +
      'the run exits with code 1.**',
  );
}

/** Scenario 11: 8 greedy workers of one process share a semaphore of limit 3. */
export const semaphoreInProcess: Scenario = {
  id: 11,
  title: `Semaphore: ${WORKERS} workers in one process, limit ${LIMIT}, one key`,
  async run(context) {
    const libraries = context.chosen(PERMIT_LIBRARIES);
    const ask: PermitAsk = { limit: LIMIT };
    const totals = await runPermits(context, libraries, {
      key: 'semaphore',
      csMs: CS_MS,
      limit: LIMIT,
      drawFor: () => () => ask,
    });
    const table: Table = {
      id: this.id,
      title: this.title,
      columns: [
        { key: 'rate', label: 'grants/s' },
        { key: 'gapP50', label: 'gap p50 ms' },
        { key: 'gapP99', label: 'gap p99 ms' },
        { key: 'gapMax', label: 'gap max ms' },
        { key: 'waitP50', label: 'wait p50 ms' },
        { key: 'waitP99', label: 'wait p99 ms' },
        { key: 'jain', label: 'Jain' },
        { key: 'commands', label: 'cmds/grant' },
        { key: 'most', label: 'most inside' },
        { key: 'violations', label: `over ${LIMIT}` },
        { key: 'retries', label: 'give-ups' },
      ],
      ratioOf: 'rate',
      rows: [],
      notes: [],
    };
    const violations = new Map<string, number>();
    const breakdown: string[] = [];
    for (const [library, total] of totals) {
      const s = summarizeSemaphore(
        total.results.map((result) => result.run),
        LIMIT,
      );
      const counted = context.commands.record(this.id, library.name, total.commands, Math.max(1, s.grants));
      violations.set(library.name, s.violations);
      breakdown.push(`${library.name}: ${counted.breakdown}`);
      table.rows.push({
        library: library.name,
        values: {
          rate: s.rate,
          gapP50: s.gap.p50,
          gapP99: s.gap.p99,
          gapMax: s.gap.max,
          waitP50: s.wait.p50,
          waitP99: s.wait.p99,
          jain: s.jain,
          commands: counted.perAcquisition,
          most: s.most,
          violations: s.violations,
          retries: total.results.reduce((sum, result) => sum + result.retries, 0),
        },
      });
    }
    table.notes.push(
      `Critical section: \`await setTimeout(${CS_MS})\`, so no contender can pass ${fmt((LIMIT * 1000) / CS_MS)} ` +
        'grants/s. Greedy: a worker asks again right after its release returns (5 of 8 always wait).',
      `Contenders take turns in slices of ${SLICE_MS} ms, each on its own key.`,
      `Gap: the k-th grant of a run can only use the permit freed by the (k − ${LIMIT})-th release; from that ` +
        'release (the holder calling release) to the grant, when the grantee was already waiting then (a worker ' +
        'that asks again right after its release and finds a permit free counts when another release came ' +
        'after its request). Wait: from calling acquire to holding a permit. Jain index over per-worker grant ' +
        'counts.',
      `Most inside / over ${LIMIT}: workers count themselves in between a grant and their call to release; a grant ` +
        `that finds ${LIMIT} inside is a violation (printed at once on stderr).`,
      `Commands per grant: INFO commandstats deltas over the measured slices (commands inside Lua scripts ` +
        `included) divided by grants. ${breakdown.join('; ')}.`,
      'nestjs-lock: one LockManager shared by the 8 workers; nestjs-lock/per-worker: one LockManager and ' +
        'connection per worker.',
      ...libraries.map((library) => `${library.name}: ${library.waiting}.`),
    );
    violationNote(table, `at most ${LIMIT} inside`, violations);
    return table;
  },
};

/** A tiny seeded generator (mulberry32), so every run draws the same sequence of modes per worker. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Scenario 12: 8 workers of one process on a readers-writer key, 90% of sections reading. */
export const readersWriterInProcess: Scenario = {
  id: 12,
  title: `Readers-writer: ${WORKERS} workers in one process, ${100 - WRITE_SHARE * 100}% reads, one key`,
  async run(context) {
    const libraries = context.chosen(PERMIT_LIBRARIES.filter((library) => library.readersWriter));
    const read: PermitAsk = { mode: 'read' };
    const write: PermitAsk = { mode: 'write' };
    const table: Table = {
      id: this.id,
      title: this.title,
      columns: [
        { key: 'rate', label: 'grants/s' },
        { key: 'writers', label: 'writers' },
        { key: 'writes', label: 'writes %' },
        { key: 'mostReaders', label: 'most readers' },
        { key: 'meanReaders', label: 'mean readers' },
        { key: 'writerP50', label: 'writer wait p50 ms' },
        { key: 'writerP99', label: 'writer wait p99 ms' },
        { key: 'readerP99', label: 'reader wait p99 ms' },
        { key: 'overtaken', label: 'writers overtaken' },
        { key: 'mostOvertakes', label: 'most later readers first' },
        { key: 'overtakenFor', label: 'overtaken up to ms' },
        { key: 'laterTurn', label: 'overtaken from a later turn' },
        { key: 'earlier', label: 'most earlier readers first' },
        { key: 'jain', label: 'Jain' },
        { key: 'commands', label: 'cmds/grant' },
        { key: 'violations', label: 'violations' },
      ],
      rows: [],
      notes: [],
    };
    const violations = new Map<string, number>();
    const breakdown: string[] = [];
    const totals = await runPermits(context, libraries, {
      key: 'rw',
      csMs: CS_MS,
      limit: undefined,
      drawFor() {
        // every contender draws the same modes: one generator per worker, seeded by its number
        const draws = Array.from({ length: WORKERS }, (_, worker) => seeded(worker + 1));
        return (worker) => (draws[worker]() < WRITE_SHARE ? write : read);
      },
    });
    for (const [library, total] of totals) {
      const s = summarizeReadersWriter(total.results.map((result) => result.run));
      const counted = context.commands.record(this.id, library.name, total.commands, Math.max(1, s.grants));
      violations.set(library.name, s.violations);
      breakdown.push(`${library.name}: ${counted.breakdown}`);
      table.rows.push({
        library: library.name,
        values: {
          rate: s.rate,
          writers: s.writes,
          writes: s.writeShare,
          mostReaders: s.mostReaders,
          meanReaders: s.meanReaders,
          writerP50: s.writerWait.p50,
          writerP99: s.writerWait.p99,
          readerP99: s.readerWait.p99,
          overtaken: s.overtakenWriters,
          mostOvertakes: s.mostOvertakes,
          overtakenFor: s.overtakenFor,
          laterTurn: s.overtakenByLaterTurn,
          earlier: s.mostEarlierReaders,
          jain: s.jain,
          commands: counted.perAcquisition,
          violations: s.violations,
        },
      });
    }
    table.notes.push(
      `Each worker draws write (${WRITE_SHARE * 100}%) or read per section from a seeded generator, holds ` +
        `\`await setTimeout(${CS_MS})\` and asks again at once. Slices of ${SLICE_MS} ms.`,
      'Most / mean readers: readers inside at once, counted by the workers between grant and release; the mean ' +
        'is time-weighted over the time any reader is inside. Writer wait: from calling acquire to holding the key.',
      'Overtaking: for each writer, the readers granted while it waited. Later readers first: those that called ' +
        'acquire after the writer did (writer preference says none); writers overtaken: writers with at least one; ' +
        'overtaken up to: how long after a writer asked the latest such reader asked. Workers whose timers fire ' +
        'together call acquire in one event-loop turn, and their requests reach Redis in an order the call order ' +
        'does not decide (a race of requests, not a queue jump); overtaken from a later turn counts the writers ' +
        'overtaken by a reader that called acquire in a later turn than the writer (whose request is then normally on its way already; on separate connections, requests ' +
        'a fraction of a ms apart may still reach Redis in either order). ' +
        'Earlier readers first: those that asked before the writer and went in while it waited (ahead of it in ' +
        'line, allowed). "After" is by the workers’ clock at the call, before any request reaches Redis.',
      'Violations: a reader granted while a writer is inside, or a writer granted while anyone is (printed at ' +
        'once on stderr).',
      `Commands per grant: ${breakdown.join('; ')}.`,
      'redis-semaphore has no readers-writer lock, and no other installed library has one: ours alone.',
      ...libraries.map((library) => `${library.name}: ${library.waiting}.`),
    );
    violationNote(table, 'no reader beside a writer, one writer alone', violations);
    return table;
  },
};
