/** A monotonic clock in ms that every process on the machine shares (CLOCK_MONOTONIC), for cross-process gaps. */
export function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** The `p`-th percentile (0..100) of `values` by nearest rank; `NaN` when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** p50, p99 and max of a sample. */
export interface Spread {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { p50: NaN, p99: NaN, max: NaN };
  return { p50: percentile(values, 50), p99: percentile(values, 99), max: Math.max(...values) };
}

/** Jain's fairness index of per-worker counts: 1 when all are equal, 1/n when one worker got everything. */
export function jainIndex(counts: readonly number[]): number {
  const sum = counts.reduce((a, b) => a + b, 0);
  const squares = counts.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? NaN : (sum * sum) / (counts.length * squares);
}

/** A number for a table: 3 significant digits, thousands without decimals, `-` for none. */
export function fmt(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return '-';
  if (!Number.isFinite(value)) return '∞';
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}
