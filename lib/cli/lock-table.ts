import type { LockHolderSummary, LockSummary } from '../interfaces/lock-summary.interface.js';
import { printable } from '../utils/printable.js';

/** The columns of the table, in order. */
const HEADINGS = ['KEY', 'KIND', 'HOLDERS', 'TTL', 'WAITERS', 'FENCE'] as const;

/** One holder as a cell: `label@host:pid`, each part printable (a key or label can hold terminal escapes). */
function holderCell(holder: LockHolderSummary): string {
  return printable(`${holder.label ?? '-'}@${holder.host ?? '?'}:${holder.pid ?? '?'}`);
}

/** The longest remaining ttl of a lock's holders, in seconds with one decimal. */
function ttlCell(lock: LockSummary): string {
  const ttls = lock.holders.map((holder) => holder.remainingTtl).filter((ttl) => ttl !== undefined);
  return ttls.length === 0 ? '-' : `${(Math.max(...ttls) / 1000).toFixed(1)}s`;
}

/** The cells of one lock, in the order of the headings. */
function cells(lock: LockSummary): string[] {
  const kind = lock.kind + (lock.limit === undefined ? '' : `/${lock.limit}`) + (lock.mode ? `:${lock.mode}` : '');
  return [
    printable(lock.key),
    kind,
    lock.holders.map(holderCell).join(',') || '-',
    ttlCell(lock),
    String(lock.waiters),
    lock.fence === undefined ? '-' : String(lock.fence),
  ];
}

/** One line per lock, tab-separated, as `ls` prints it: for `cut` and `awk`. */
export function lockLines(locks: readonly LockSummary[]): string {
  return locks.map((lock) => `${cells(lock).join('\t')}\n`).join('');
}

/** The locks as a table with a heading and aligned columns, as `watch` draws it. */
export function lockTable(locks: readonly LockSummary[]): string {
  const rows = [[...HEADINGS], ...locks.map(cells)];
  const widths = HEADINGS.map((_heading, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows
    .map(
      (row) =>
        `${row
          .map((cell, column) => cell.padEnd(widths[column]))
          .join('  ')
          .trimEnd()}\n`,
    )
    .join('');
}
