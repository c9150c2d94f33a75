import type { BenchContext, Scenario } from '../context.js';
import type { Library, Session } from '../libraries.js';
import type { Table } from '../report.js';
import { concurrentCycles, sequentialCycles } from '../scenarios/uncontended.js';
import { interleaved, type SliceTotals } from '../support/interleave.js';
import { spread } from '../support/stats.js';

const SLICE_LATENCY = 250;
const SLICE_THROUGHPUT = 500;
/** Concurrent loops of scenario 2, each on its own key. */
export const LOOPS = 64;

const COST_COLUMNS = [
  { key: 'clientCpu', label: 'client CPU µs/cycle' },
  { key: 'serverCpu', label: 'server CPU µs/cycle' },
  { key: 'commands', label: 'server cmds/cycle' },
];

/** One session per contender, opened on the bench's server. */
const oneSession = (context: BenchContext) => ({
  open: (library: Library) => library.open(context.redis.url),
  close: (session: Session) => session.close(),
});

/** What a cycle cost, from a contender's slice totals; also logs its commands per cycle for the commands table. */
function costPerCycle(context: BenchContext, scenario: number, library: Library, total: SliceTotals<unknown>) {
  const commands = context.commands.record(scenario, library.name, total.commands, total.count);
  return {
    clientCpu: (total.clientCpuMs * 1000) / total.count,
    serverCpu: (total.serverCpuMs * 1000) / total.count,
    commands: commands.perAcquisition,
  };
}

/** Scenario 1: acquire then release, one after the other, on a key nobody else wants. */
export const uncontendedLatency: Scenario = {
  id: 1,
  title: 'Uncontended acquire + release latency, sequential',
  async run(context) {
    const table: Table = {
      id: this.id,
      title: this.title,
      columns: [
        { key: 'p50', label: 'p50 ms' },
        { key: 'p99', label: 'p99 ms' },
        { key: 'max', label: 'max ms' },
        { key: 'cycles', label: 'cycles' },
        ...COST_COLUMNS,
      ],
      ratioOf: 'p50',
      rows: [],
      notes: [
        'One acquire then one release per cycle, on a key nobody else wants; one client per contender. Contenders ' +
          `take turns in slices of ${SLICE_LATENCY} ms so that other load on the machine falls on all alike.`,
        'Server commands: INFO commandstats deltas, which count the commands a Lua script runs as well as the ' +
          'script call (per command in the notes of the commands table).',
      ],
    };
    const totals = await interleaved(context, context.contenders('uncontended'), {
      ...oneSession(context),
      sliceMs: SLICE_LATENCY,
      run: (session, library, ms) => sequentialCycles(session, `sequential:${library.name}`, ms),
      count: (latencies) => latencies.length,
    });
    for (const [library, total] of totals) {
      table.rows.push({
        library: library.name,
        values: {
          ...spread(total.results.flat()),
          cycles: total.count,
          ...costPerCycle(context, this.id, library, total),
        },
      });
    }
    return table;
  },
};

/** Scenario 2: many concurrent acquire/release loops on one client, each on its own key. */
export const uncontendedThroughput: Scenario = {
  id: 2,
  title: `Uncontended throughput, ${LOOPS} concurrent loops on distinct keys`,
  async run(context) {
    const table: Table = {
      id: this.id,
      title: this.title,
      columns: [{ key: 'rate', label: 'cycles/s' }, ...COST_COLUMNS],
      ratioOf: 'rate',
      rows: [],
      notes: [
        `${LOOPS} loops of acquire + release share one client (one LockManager), each loop on its own key; ` +
          `contenders take turns in slices of ${SLICE_THROUGHPUT} ms.`,
      ],
    };
    const totals = await interleaved(context, context.contenders('uncontended'), {
      ...oneSession(context),
      sliceMs: SLICE_THROUGHPUT,
      run: (session, library, ms) => concurrentCycles(session, `loop:${library.name}:`, LOOPS, ms),
      count: (cycles) => cycles,
    });
    for (const [library, total] of totals) {
      table.rows.push({
        library: library.name,
        values: { rate: (total.count / context.durationMs) * 1000, ...costPerCycle(context, this.id, library, total) },
      });
    }
    return table;
  },
};
