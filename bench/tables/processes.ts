import type { BenchContext, Scenario } from '../context.js';
import { fmt } from '../support/stats.js';
import { contendInProcesses } from '../scenarios/processes.js';
import { meter, type Usage } from '../support/usage.js';
import { WORKERS, contentionNotes, contentionRow, contentionTable } from './contention-table.js';

async function inProcesses(context: BenchContext, scenario: Scenario, handoff: boolean) {
  const table = contentionTable(scenario.id, scenario.title, handoff);
  const libraries = context.contenders('processes');
  const options = { key: 'contended', csMs: 1, handoff };
  const csMean: number[] = [];
  const startupWaits: string[] = [];
  for (const library of libraries) {
    await context.redis.reset();
    let stop: (() => Promise<Usage>) | undefined;
    const run = await contendInProcesses(
      library.name,
      context.redis.url,
      WORKERS,
      options,
      context.durationMs,
      context.warmupMs,
      async () => {
        stop = await meter(context.redis);
      },
    );
    const usage = await (stop as () => Promise<Usage>)();
    const { summary, row } = contentionRow(library.name, [run.grants], { ...run, serverCpuMs: usage.serverCpuMs });
    context.commands.record(scenario.id, library.name, usage.commands, summary.grants);
    csMean.push(summary.csMean);
    startupWaits.push(`${library.name} ${fmt(run.startupWaitMax)}`);
    table.rows.push(row);
  }
  contentionNotes(table, csMean, handoff, libraries);
  table.notes.push(
    'Each worker is a forked Node process with its own session (for nestjs-lock: its own LockManager); client ' +
      'CPU sums the workers’. ' +
      (handoff ? 'The parent only relays the handoff rule over IPC. ' : 'The parent only starts and collects them. ') +
      `The workers contend from the start; grants acquired in the first ${context.warmupMs} ms (the processes ` +
      'starting together on the shared cores, opening their connections and subscriptions) are not measured, ' +
      'nor the CPU, retries and server commands of that time. The longest wait among them, ms: ' +
      `${startupWaits.join(', ')}.`,
  );
  return table;
}

/** Scenario 5: polite worker processes take turns on one key. */
export const handoffInProcesses: Scenario = {
  id: 5,
  title: `Contended handoff, ${WORKERS} worker processes, one key`,
  run(context) {
    return inProcesses(context, this, true);
  },
};

/** Scenario 6: greedy worker processes re-acquire one key as fast as they can. */
export const greedyInProcesses: Scenario = {
  id: 6,
  title: `Greedy contention, ${WORKERS} worker processes re-acquiring one key at once`,
  run(context) {
    return inProcesses(context, this, false);
  },
};
