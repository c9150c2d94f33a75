import { hostname } from 'node:os';
import type { LockHolder, LockInfo } from '../interfaces/lock-info.interface.js';
import type { LockState } from '../interfaces/lease.interface.js';

/** The part of every holder record of this process that never changes, as JSON text. */
const PROCESS_PART = `{"host":${JSON.stringify(hostname())},"pid":${process.pid}`;
/** The last label's JSON part: a process takes most of its leases under a few labels, often one at a time. */
let lastLabel: { label: string | undefined; part: string } = { label: undefined, part: '' };

/**
 * The holder record a store keeps beside a lease (`AcquireRequest.holder`): short JSON that an operator
 * can also read with `redis-cli GET`. It names the process and the caller, never the token. Written on
 * every acquisition, so it is put together from cached parts instead of a JSON.stringify of an object.
 */
export function encodeHolder(label: string | undefined): string {
  if (lastLabel.label !== label) {
    lastLabel = { label, part: label === undefined ? '' : `,"label":${JSON.stringify(label)}` };
  }
  return `${PROCESS_PART}${lastLabel.part},"acquiredAt":"${isoNow()}"}`;
}

/** The time as ISO text, formatted once per millisecond: a busy process takes many locks in one. */
let lastTime = { ms: NaN, text: '' };
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastTime.ms) lastTime = { ms, text: new Date(ms).toISOString() };
  return lastTime.text;
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
