import { hostname } from 'node:os';
import type { LockHolder, LockInfo } from '../interfaces/lock-info.interface.js';
import type { LockState } from '../interfaces/lease.interface.js';

/** The part of every holder record of this process that never changes, as JSON text. */
const PROCESS_PART = `{"host":${JSON.stringify(hostname())},"pid":${process.pid}`;
/** The last record made: a busy process takes many locks in one millisecond, most under one label. */
let last: { label: string | undefined; ms: number; record: string } = { label: undefined, ms: NaN, record: '' };
/** The last millisecond as ISO text, for records of other labels in the same millisecond. */
let lastTime = { ms: NaN, text: '' };

/**
 * The holder record a store keeps beside a lease (`AcquireRequest.holder`): short JSON that an operator
 * can also read with `redis-cli GET`. It names the process and the caller, never the token. Written on
 * every acquisition, so it is put together from cached parts instead of a JSON.stringify of an object,
 * and made once per label and millisecond.
 */
export function encodeHolder(label: string | undefined): string {
  const ms = Date.now();
  if (ms === last.ms && label === last.label) return last.record;
  if (ms !== lastTime.ms) lastTime = { ms, text: new Date(ms).toISOString() };
  const labelPart = label === undefined ? '' : `,"label":${JSON.stringify(label)}`;
  last = { label, ms, record: `${PROCESS_PART}${labelPart},"acquiredAt":"${lastTime.text}"}` };
  return last.record;
}

/**
 * Reads a holder record back; `undefined` for a record that is not one (written by something else), so
 * `inspect()` never fails because of what another process wrote.
 */
export function decodeHolder(text: string | undefined): LockHolder | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { host, pid, label, acquiredAt } = value as Record<string, unknown>;
  const date = typeof acquiredAt === 'string' ? new Date(acquiredAt) : undefined;
  if (typeof host !== 'string' || typeof pid !== 'number' || !date || Number.isNaN(date.getTime())) return undefined;
  return { host, pid, ...(typeof label === 'string' ? { label } : {}), acquiredAt: date };
}

/** The store's view of a resource as `inspect()` returns it: the holder record read back. */
export function toLockInfo(state: LockState): LockInfo {
  const { holder, ...rest } = state;
  const decoded = state.held ? decodeHolder(holder) : undefined;
  return decoded ? { ...rest, holder: decoded } : rest;
}
