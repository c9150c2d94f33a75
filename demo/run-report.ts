import type { Sale } from '../sample/inventory/inventory.service.js';
import type { PurchaseOutcome } from './purchase-burst.js';
import type { TickRuns } from './report-runs.js';
import { retriesHold, type RetryReport } from './retry-report.js';

/** Percentiles of a set of durations, in ms. */
export interface Percentiles {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
  readonly count: number;
}

/** What one run of the demo (with or without locks) showed. */
export interface RunReport {
  readonly locks: boolean;
  readonly requests: number;
  readonly stock: number;
  /** Purchases confirmed (201). */
  readonly sold: number;
  /** Confirmed beyond the stock: units promised that do not exist. Must be 0 with locks. */
  readonly oversold: number;
  /** The stock the storage holds after the burst. */
  readonly stockLeft: number;
  /** 409: gave up waiting for the lock. */
  readonly conflicts: number;
  /** 422: found the stock gone. */
  readonly outOfStock: number;
  /** Any other answer, or none. */
  readonly failed: number;
  /** Sales whose read-modify-write started while another one's was still running. Must be 0 with locks. */
  readonly overlaps: number;
  /** From sending a purchase to its read-modify-write starting, for sales: the time spent waiting in line. */
  readonly waitMs: Percentiles | null;
  /** From one sale's work ending to the next one's starting: release, wake-up, acquire (with locks only). */
  readonly handoffMs: Percentiles | null;
  /** Hand-offs whose two sales ran on different instances. */
  readonly crossInstanceHandoffs: number;
  readonly salesByInstance: Record<string, number>;
  /** One buyer's purchase sent many times with one `Idempotency-Key`. Must run and deduct once with locks. */
  readonly retried: RetryReport;
  /**
   * Who ran the report in each tick. At most one instance per tick with locks; none when every instance's timer
   * fired over 250 ms late, a firing cron skips (a busy machine).
   */
  readonly reportRuns: TickRuns[];
  /** How long the burst took, in ms. */
  readonly burstMs: number;
}

/** Whether a run with locks showed what locks promise. */
export function lockedRunHolds(report: RunReport): boolean {
  return (
    report.oversold === 0 &&
    report.overlaps === 0 &&
    report.stockLeft >= 0 &&
    retriesHold(report.retried) &&
    report.reportRuns.every((tick) => tick.instances.length <= 1) &&
    report.reportRuns.some((tick) => tick.instances.length === 1)
  );
}

/** Turns the raw outcomes of a run into its {@link RunReport}. */
export function analyseRun(input: {
  locks: boolean;
  stock: number;
  stockLeft: number;
  outcomes: readonly PurchaseOutcome[];
  retried: RetryReport;
  reportRuns: TickRuns[];
  burstMs: number;
}): RunReport {
  const { outcomes } = input;
  const sales = outcomes
    .filter((outcome): outcome is PurchaseOutcome & { sale: Sale } => outcome.sale !== undefined)
    .sort((a, b) => a.sale.startedAt - b.sale.startedAt);
  const statusCount = (status: number): number => outcomes.filter((outcome) => outcome.status === status).length;

  let overlaps = 0;
  let busyUntil = -Infinity;
  const handoffs: number[] = [];
  let crossInstanceHandoffs = 0;
  sales.forEach(({ sale, sentAt }, index) => {
    if (sale.startedAt < busyUntil) overlaps++;
    const previous = sales[index - 1]?.sale;
    // a hand-off: this buyer was already waiting when the previous sale finished
    if (previous && sentAt < previous.finishedAt && sale.startedAt >= previous.finishedAt) {
      handoffs.push(sale.startedAt - previous.finishedAt);
      if (sale.instance !== previous.instance) crossInstanceHandoffs++;
    }
    busyUntil = Math.max(busyUntil, sale.finishedAt);
  });

  const salesByInstance: Record<string, number> = {};
  for (const { sale } of sales) salesByInstance[sale.instance] = (salesByInstance[sale.instance] ?? 0) + 1;
  const sold = sales.length;
  const conflicts = statusCount(409);
  const outOfStock = statusCount(422);
  return {
    locks: input.locks,
    requests: outcomes.length,
    stock: input.stock,
    sold,
    oversold: Math.max(0, sold - input.stock),
    stockLeft: input.stockLeft,
    conflicts,
    outOfStock,
    failed: outcomes.length - sold - conflicts - outOfStock,
    overlaps,
    waitMs: percentiles(sales.map(({ sale, sentAt }) => sale.startedAt - sentAt)),
    handoffMs: input.locks ? percentiles(handoffs) : null,
    crossInstanceHandoffs: input.locks ? crossInstanceHandoffs : 0,
    salesByInstance,
    retried: input.retried,
    reportRuns: input.reportRuns,
    burstMs: Math.round(input.burstMs),
  };
}

/** Nearest-rank percentiles, rounded to 0.1 ms; `null` for no values. */
export function percentiles(values: readonly number[]): Percentiles | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number): number =>
    round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]);
  return { p50: at(50), p95: at(95), p99: at(99), max: round(sorted[sorted.length - 1]), count: sorted.length };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
