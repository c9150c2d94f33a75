import { PEERS } from '../libraries.js';
import { value, type Table, type TargetResult } from '../report.js';
import { fmt } from '../support/stats.js';

/** The tables of this run, by scenario number (`undefined` for one that did not run). */
export type Tables = (id: number) => Table | undefined;

/** One target: what is measured, its limit, and why it was missed as far as the run can tell. */
export interface Check {
  readonly target: string;
  /** The measured value, or `undefined` when its scenario did not run. */
  readonly measured: number | undefined;
  readonly unit: string;
  readonly limit: number;
  /** `<=` / `>=` meet the target at the limit, `<` / `>` only past it. */
  readonly compare: '<=' | '>=' | '<' | '>';
  /** Shown next to a miss only. Keep these honest: they are read next to the numbers they explain. */
  readonly why?: () => string;
}

/** A value of one row of a table found by scenario number. */
export const at = (tables: Tables, id: number, library: string, key: string): number | undefined =>
  value(tables(id), library, key);

export const ratio = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined || b === 0 ? undefined : a / b;

/**
 * The peer library with the lowest (or highest) `key` in scenario `id`, among those that ran: what "below
 * (above) every other contender" is measured against.
 */
export function bestPeer(
  tables: Tables,
  id: number,
  key: string,
  best: 'lowest' | 'highest',
): { name: string; value: number } | undefined {
  let found: { name: string; value: number } | undefined;
  for (const peer of PEERS) {
    const measured = at(tables, id, peer.name, key);
    if (measured === undefined || Number.isNaN(measured)) continue;
    if (!found || (best === 'lowest' ? measured < found.value : measured > found.value)) {
      found = { name: peer.name, value: measured };
    }
  }
  return found;
}

function met(check: Check, measured: number): boolean {
  switch (check.compare) {
    case '<=':
      return measured <= check.limit;
    case '>=':
      return measured >= check.limit;
    case '<':
      return measured < check.limit;
    case '>':
      return measured > check.limit;
  }
}

/** The check against its limit, with the margin in words and, for a miss, its reason. */
export function judge(check: Check): TargetResult {
  const { measured, limit } = check;
  if (measured === undefined || Number.isNaN(measured)) {
    return { target: check.target, measured: '-', met: undefined, margin: '', why: '' };
  }
  const ok = met(check, measured);
  const percent = fmt(Math.abs(measured / limit - 1) * 100);
  const side = measured > limit ? 'above' : 'below';
  const margin = limit === 0 ? '' : `${percent}% ${side} the limit of ${fmt(limit)}${check.unit}`;
  return {
    target: check.target,
    measured: `${fmt(measured)}${check.unit}`,
    met: ok,
    margin,
    why: ok ? '' : (check.why?.() ?? ''),
  };
}
