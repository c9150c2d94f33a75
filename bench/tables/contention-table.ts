import type { Library } from '../libraries.js';
import type { Column, Row, Table } from '../report.js';
import { summarize, type ContentionSummary, type Grant } from '../scenarios/contention.js';
import { fmt } from '../support/stats.js';

/** Workers that contend for one key in scenarios 3 to 6 (in one process or one per process). */
export const WORKERS = 8;

const HANDOFF_COLUMNS: readonly Column[] = [
  { key: 'rate', label: 'CS/s' },
  { key: 'gapP50', label: 'gap p50 ms' },
  { key: 'gapP99', label: 'gap p99 ms' },
  { key: 'gapMax', label: 'gap max ms' },
  { key: 'jain', label: 'Jain' },
];
const GREEDY_COLUMNS: readonly Column[] = [
  { key: 'rate', label: 'CS/s' },
  { key: 'waitP50', label: 'wait p50 ms' },
  { key: 'waitP99', label: 'wait p99 ms' },
  { key: 'waitMax', label: 'wait max ms' },
  { key: 'jain', label: 'Jain' },
  { key: 'self', label: 'self re-takes %' },
  { key: 'gapP50', label: 'gap p50 ms' },
  { key: 'gapP99', label: 'gap p99 ms' },
];
const COST_COLUMNS: readonly Column[] = [
  { key: 'clientCpu', label: 'client CPU µs/CS' },
  { key: 'serverCpu', label: 'server CPU µs/CS' },
  { key: 'retries', label: 'give-ups' },
  { key: 'overlaps', label: 'overlaps' },
];

/** An empty contention table: the hand-off columns (polite workers) or the greedy ones. */
export function contentionTable(id: number, title: string, handoff: boolean): Table {
  const columns = [...(handoff ? HANDOFF_COLUMNS : GREEDY_COLUMNS), ...COST_COLUMNS];
  return { id, title, columns, ratioOf: 'rate', rows: [], notes: [] };
}

/** What one contender's run cost, besides its grants. */
export interface RunCost {
  readonly retries: number;
  /** Client CPU of every worker over the measured loops, ms. */
  readonly clientCpuMs: number;
  readonly serverCpuMs: number;
}

/** One contender's row, from its runs (`runs[r][worker]`), and the summary it was made from. */
export function contentionRow(
  library: string,
  runs: Grant[][][],
  cost: RunCost,
): { summary: ContentionSummary; row: Row } {
  const s = summarize(runs);
  const perGrant = (ms: number) => (ms * 1000) / Math.max(1, s.grants);
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
        clientCpu: perGrant(cost.clientCpuMs),
        serverCpu: perGrant(cost.serverCpuMs),
        retries: cost.retries,
        overlaps: s.overlaps,
        csMean: s.csMean,
      },
    },
  };
}

/** The notes every contention table carries: the critical section, the rule, the measures, the contenders. */
export function contentionNotes(table: Table, csMean: number[], handoff: boolean, libraries: readonly Library[]) {
  table.notes.push(
    `Critical section: \`await setTimeout(1)\`, measured ${fmt(Math.min(...csMean))}–${fmt(Math.max(...csMean))} ms on average, ` +
      `so no contender can pass ${fmt(1000 / Math.min(...csMean))} CS/s.`,
    handoff
      ? 'Handoff rule: after releasing, a worker asks again only once another worker has taken the key. ' +
          'Gap: from the moment a holder calls release to the moment the next (other) holder’s acquire resolves.'
      : 'Greedy: a worker asks again right after its release returns. Wait: from calling acquire to holding the key ' +
          '(library give-ups retried by the bench count as waiting). Self re-takes: grants that went to the worker ' +
          'that held the key just before. Gap: from a release to the next grant to another worker.',
    'CS/s: grants per second of the time the run took, from the first request to the last release (a worker ' +
      'that asked before the end is served, however late). Jain index over per-worker grant counts. Client CPU: ' +
      'user + system CPU of the workers’ processes over the measured loops, per grant.',
    'Overlaps: grants that began before the previous holder called release; any would be a mutual-exclusion bug.',
    ...libraries.map((library) => `${library.name}: ${library.waiting}.`),
  );
}
