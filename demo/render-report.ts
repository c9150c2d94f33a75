import type { DemoOptions } from './demo-options.js';
import { lockedRunHolds, type Percentiles, type RunReport } from './run-report.js';

/** The two runs side by side, as a reader should see them. */
export function renderReport(options: DemoOptions, locked: RunReport, unlocked: RunReport): string {
  const rows: Array<[string, (run: RunReport) => string]> = [
    [`units sold (stock ${options.stock})`, (run) => String(run.sold)],
    ['oversold (must be 0)', (run) => String(run.oversold)],
    ['stock left in Redis', (run) => String(run.stockLeft)],
    ['409 gave up waiting', (run) => String(run.conflicts)],
    ['422 out of stock', (run) => String(run.outOfStock)],
    ...(locked.failed + unlocked.failed > 0
      ? [['failed requests', (run: RunReport) => String(run.failed)] as [string, (run: RunReport) => string]]
      : []),
    ['overlapping read-modify-writes', (run) => String(run.overlaps)],
    ['wait before work p50 / p95 / max, ms', (run) => triple(run.waitMs, 'max')],
    ['handoff p50 / p95 / p99, ms', (run) => triple(run.handoffMs, 'p99')],
    ['  between instances', (run) => (run.handoffMs ? `${run.crossInstanceHandoffs} of ${run.handoffMs.count}` : '—')],
    ['report runs per tick (must be 1)', (run) => run.reportRuns.map((tick) => tick.instances.length).join(' ')],
  ];
  const label = Math.max(...rows.map(([name]) => name.length));
  const width = Math.max(22, ...rows.flatMap(([, cell]) => [cell(locked).length, cell(unlocked).length]));
  const line = (name: string, a: string, b: string): string =>
    `  ${name.padEnd(label)}  ${a.padStart(width)}  ${b.padStart(width)}`;
  return [
    '',
    `nestjs-lock demo: ${options.requests} concurrent purchases of ${options.stock} units over 3 instances, ` +
      `then ${options.ticks} report tick${options.ticks === 1 ? '' : 's'}`,
    '',
    line('', 'with the lock', 'without (LOCKS=off)'),
    ...rows.map(([name, cell]) => line(name, cell(locked), cell(unlocked))),
    '',
    verdict(locked, unlocked),
    '',
  ].join('\n');
}

function verdict(locked: RunReport, unlocked: RunReport): string {
  const withLock = lockedRunHolds(locked)
    ? 'With the lock: nothing oversold, no overlapping writes, one report per tick.'
    : 'With the lock: FAILED, see the table above.';
  const duplicates = unlocked.reportRuns.reduce((sum, tick) => sum + Math.max(0, tick.instances.length - 1), 0);
  const withoutLock =
    unlocked.oversold > 0 || duplicates > 0
      ? `Without it: ${unlocked.oversold} units oversold, ${duplicates} duplicate report runs.`
      : 'Without it: no oversell this time (the race did not show); try more --requests.';
  return `${withLock}\n${withoutLock}`;
}

function triple(values: Percentiles | null, last: 'p99' | 'max'): string {
  if (!values) return '—';
  const format = (value: number): string => (value >= 100 ? String(Math.round(value)) : value.toFixed(1));
  return `${format(values.p50)} / ${format(values.p95)} / ${format(values[last])}`;
}
