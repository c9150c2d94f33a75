import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Scenario } from '../context.js';
import type { Table } from '../report.js';
import { BATCH as RENEW_BATCH, HOLDERS, settle } from '../scenarios/renewal.js';
import { cpuMsSince } from '../support/cpu.js';
import { commandDelta } from '../support/redis.js';
import { fmt } from '../support/stats.js';

/** Leases held at once in scenario 8. */
export const LEASES = 10_000;
/** Their lease length, ms. */
export const RENEW_TTL = 3000;

/** Scenario 8: many held leases kept alive by each contender's own renewal. */
export const renewal: Scenario = {
  id: 8,
  title: `${LEASES.toLocaleString('en-US')} held leases under auto-renewal`,
  async run(context) {
    const holders = context.chosen(HOLDERS);
    const table: Table = {
      id: this.id,
      title: this.title,
      columns: [
        { key: 'setup', label: 'take all, s' },
        { key: 'evalsha', label: 'EVALSHA sent/s' },
        { key: 'commands', label: 'server commands/s' },
        { key: 'pipelines', label: 'pipelines/s' },
        { key: 'clientCpu', label: 'client CPU % of a core' },
        { key: 'lagP99', label: 'loop lag p99 ms' },
        { key: 'lagMax', label: 'loop lag max ms' },
        { key: 'lost', label: 'lost' },
      ],
      rows: [],
      notes: [
        `${LEASES.toLocaleString('en-US')} leases of ${RENEW_TTL} ms, one client per contender; measured over ` +
          `${(2 * RENEW_TTL) / 1000} s after one TTL of settling. Loop lag: monitorEventLoopDelay (10 ms resolution) ` +
          `minus the 10 ms it samples at. Expected for batched renewal at ttl/3 in batches of ${RENEW_BATCH}: ` +
          `${fmt(LEASES / (RENEW_TTL / 3000))} lease renewals/s in ${fmt(LEASES / (RENEW_TTL / 3000) / RENEW_BATCH)} ` +
          'requests/s. Server commands count those run inside scripts (GET and PEXPIRE per lease). Client CPU: ' +
          'this process over the measured window (no cycles here, so per second, not per cycle).',
        ...holders.map((holder) => `${holder.name}: ${holder.renewal}.`),
        'murlock has no renewal (a lease lasts its releaseTime), so it has no row here.',
        'redis-semaphore starts each refresh interval when its acquire reply is handled; with 10,000 taken at once ' +
          'the replies come up to a second after the SET, so with a 3 s lockTimeout (its default is 10 s) a refresh ' +
          'can come after the key expired, and it then reports the lock lost.',
      ],
    };
    for (const holder of holders) {
      await context.redis.reset();
      const started = performance.now();
      const holding = await holder.hold(context.redis.url, LEASES, RENEW_TTL);
      const setup = (performance.now() - started) / 1000;
      try {
        await settle(RENEW_TTL);
        const lag = monitorEventLoopDelay({ resolution: 10 });
        const pipelinesBefore = holding.pipelines();
        const before = await context.redis.commandCounts();
        const cpuBefore = process.cpuUsage();
        lag.enable();
        await sleep(2 * RENEW_TTL);
        lag.disable();
        const clientCpuMs = cpuMsSince(cpuBefore);
        const delta = commandDelta(before, await context.redis.commandCounts());
        const seconds = (2 * RENEW_TTL) / 1000;
        table.rows.push({
          library: holder.name,
          values: {
            setup,
            evalsha: (delta.byCommand.evalsha ?? 0) / seconds,
            commands: delta.total / seconds,
            pipelines: (holding.pipelines() - pipelinesBefore) / seconds,
            clientCpu: clientCpuMs / (seconds * 10),
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
  },
};
