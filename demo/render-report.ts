import type { DemoOptions } from './demo-options.js';
import { lockedRunHolds, type Percentiles, type RunReport } from './run-report.js';
import { retriesHold } from './retry-report.js';

type Row = [string, (run: RunReport) => string];

/** The two runs side by side, as a reader should see them. */
export function renderReport(options: DemoOptions, locked: RunReport, unlocked: RunReport): string {
  const rows: Row[] = [
    [`units sold (stock ${options.stock})`, (run) => String(run.sold)],
    ['oversold (must be 0)', (run) => String(run.oversold)],
    ['stock left in Redis', (run) => String(run.stockLeft)],
    ['409 gave up waiting', (run) => String(run.conflicts)],
    ['422 out of stock', (run) => String(run.outOfStock)],
    ...(locked.failed + unlocked.failed > 0
      ? [['failed requests', (run: RunReport) => String(run.failed)] as Row]
      : []),
    ['overlapping read-modify-writes', (run) => String(run.overlaps)],
    ['wait before work p50 / p95 / max, ms', (run) => triple(run.waitMs, 'max')],
    ['handoff p50 / p95 / p99, ms', (run) => triple(run.handoffMs, 'p99')],
    ['  between instances', (run) => (run.handoffMs ? `${run.crossInstanceHandoffs} of ${run.handoffMs.count}` : '—')],
    ['report runs per tick (at most 1)', (run) => run.reportRuns.map((tick) => tick.instances.length).join(' ')],
  ];
  const retryRows: Row[] = [
    ['requests sent with the one key', (run) => String(run.retried.attempts)],
    ['purchases that ran (must be 1)', (run) => String(run.retried.ran)],
    ['409 + Retry-After (first still running)', (run) => String(run.retried.conflicts)],
    ['replayed (Idempotent-Replayed: true)', (run) => String(run.retried.replayed)],
    ...(locked.retried.failed + unlocked.retried.failed > 0
      ? [['failed requests', (run: RunReport) => String(run.retried.failed)] as Row]
      : []),
    ['sale ids the buyer got (must be 1)', (run) => String(run.retried.saleIds)],
    ['stock deducted (must be 1)', (run) => String(run.retried.deducted)],
  ];
  const allRows = [...rows, ...retryRows];
  const label = Math.max(...allRows.map(([name]) => name.length));
  const width = Math.max(22, ...allRows.flatMap(([, cell]) => [cell(locked).length, cell(unlocked).length]));
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
    `then one buyer's purchase sent ${options.retries} times at once with one Idempotency-Key,`,
    'each 409 sent again after its Retry-After, then once more to each instance',
    '',
    ...retryRows.map(([name, cell]) => line(name, cell(locked), cell(unlocked))),
    '',
    verdict(locked, unlocked),
    '',
  ].join('\n');
}

function verdict(locked: RunReport, unlocked: RunReport): string {
  const withLock = lockedRunHolds(locked)
    ? 'With the lock: nothing oversold, no overlapping writes, one report per tick, and the retried purchase ' +
      `ran once (${locked.retried.replayed} retries replayed its answer).`
    : 'With the lock: FAILED, see the table above.';
  const skipped = locked.reportRuns.filter((tick) => tick.instances.length === 0).length;
  const skippedNote = skipped
    ? ` ${skipped} tick${skipped === 1 ? '' : 's'} ran nowhere: every instance's timer fired over 250 ms late ` +
      '(a busy machine), and cron skips such a firing.'
    : '';
  const duplicates = unlocked.reportRuns.reduce((sum, tick) => sum + Math.max(0, tick.instances.length - 1), 0);
  const retried = retriesHold(unlocked.retried)
    ? ''
    : ` The retried purchase ran ${unlocked.retried.ran} times and deducted ${unlocked.retried.deducted} units.`;
  const withoutLock =
    unlocked.oversold > 0 || duplicates > 0
      ? `Without it: ${unlocked.oversold} units oversold, ${duplicates} duplicate report runs.${retried}`
      : `Without it: no oversell this time (the race did not show); try more --requests.${retried}`;
  return `${withLock}${skippedNote}\n${withoutLock}`;
}

function triple(values: Percentiles | null, last: 'p99' | 'max'): string {
  if (!values) return '—';
  const format = (value: number): string => (value >= 100 ? String(Math.round(value)) : value.toFixed(1));
  return `${format(values.p50)} / ${format(values.p95)} / ${format(values[last])}`;
}
