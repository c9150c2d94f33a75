import type { BenchContext, Scenario } from '../context.js';
import type { Library, Session } from '../libraries.js';
import { contendInProcess, type ContentionOptions, type Grant } from '../scenarios/contention.js';
import { interleaved } from '../support/interleave.js';
import { WORKERS, contentionNotes, contentionRow, contentionTable } from './contention-table.js';

const SLICE_CONTENTION = 1000;

/** The retries all distinct sessions of a contender have counted so far. */
const retriesOf = (sessions: readonly Session[]): number =>
  [...new Set(sessions)].reduce((total, session) => total + session.retries, 0);

/** `WORKERS` workers of this process, each with its own session or all with one (a shared contender). */
async function openWorkers(library: Library, url: string): Promise<Session[]> {
  const own: Session[] = [];
  while (own.length < (library.shared ? 1 : WORKERS)) own.push(await library.open(url));
  return Array.from({ length: WORKERS }, (_, i) => own[library.shared ? 0 : i]);
}

async function inProcess(context: BenchContext, scenario: Scenario, options: ContentionOptions) {
  const table = contentionTable(scenario.id, scenario.title, options.handoff);
  const libraries = context.contenders('in-process');
  const totals = await interleaved(context, libraries, {
    sliceMs: SLICE_CONTENTION,
    open: (library) => openWorkers(library, context.redis.url),
    close: async (workers) => void (await Promise.all([...new Set(workers)].map((session) => session.close()))),
    async run(workers, library, ms) {
      const before = retriesOf(workers);
      const grants = await contendInProcess(workers, { ...options, key: `contended:${library.name}` }, ms);
      return { grants, retries: retriesOf(workers) - before };
    },
    count: (result) => result.grants.flat().length,
  });
  const csMean: number[] = [];
  for (const [library, total] of totals) {
    const runs: Grant[][][] = total.results.map((result) => result.grants);
    const retries = total.results.reduce((sum, result) => sum + result.retries, 0);
    const { summary, row } = contentionRow(library.name, runs, { ...total, retries });
    context.commands.record(scenario.id, library.name, total.commands, summary.grants);
    csMean.push(summary.csMean);
    table.rows.push(row);
  }
  contentionNotes(table, csMean, options.handoff, libraries);
  table.notes.push(
    `Contenders take turns in slices of ${SLICE_CONTENTION} ms, each on its own key.`,
    'nestjs-lock: one LockManager shared by the 8 workers (one per process, as a Nest app has); ' +
      'nestjs-lock/per-worker: one LockManager and connection per worker, so waiters meet across clients ' +
      'through the line of waiting processes, release notices and the hand-off window.',
  );
  return table;
}

/** Scenario 3: polite workers of one process take turns on one key. */
export const handoffInProcess: Scenario = {
  id: 3,
  title: `Contended handoff, ${WORKERS} workers in one process, one key`,
  run(context) {
    return inProcess(context, this, { key: 'contended', csMs: 1, handoff: true });
  },
};

/** Scenario 4: greedy workers of one process re-acquire one key as fast as they can. */
export const greedyInProcess: Scenario = {
  id: 4,
  title: `Greedy contention, ${WORKERS} workers in one process re-acquiring at once`,
  run(context) {
    return inProcess(context, this, { key: 'contended', csMs: 1, handoff: false });
  },
};
