import { hostname } from 'node:os';
import type { LockHolder, LockInfo } from '../interfaces/lock-info.interface.js';
import type { LockState } from '../interfaces/lock-store.interface.js';

const HOST = hostname();

/**
 * The holder record a store keeps beside a lease (`AcquireRequest.holder`): short JSON that an operator
 * can also read with `redis-cli GET`. It names the process and the caller, never the token.
 */
export function encodeHolder(label: string | undefined): string {
  return JSON.stringify({ host: HOST, pid: process.pid, label, acquiredAt: new Date().toISOString() });
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
