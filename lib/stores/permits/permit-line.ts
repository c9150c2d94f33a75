import type { PermitModeCode } from './permit-shape.js';

/** One permit of a resource held in memory. */
export interface HeldPermit {
  readonly mode: PermitModeCode;
  /** `performance.now()` time at which it ends. */
  expiresAt: number;
  readonly fence?: number;
  holder?: string;
}

/** One waiting place of a resource's line held in memory. */
export interface WaitingPlace {
  readonly token: string;
  readonly mode: PermitModeCode;
  /** When its wait ends (`performance.now()`). */
  until: number;
  /** When the permit reserved for it ends unclaimed; 0 while none is. */
  reservedUntil: number;
}

/** What {@link callLine} found. */
export interface LineCall {
  /** The tokens of the places that fit (each has a permit reserved). */
  readonly fitting: ReadonlySet<string>;
  /** How many places it reserved a permit for just now (their waiters are to be told). */
  readonly reserved: number;
  /** Whether a place that does not fit (or a mutex lease) holds back everyone behind it. */
  readonly stopped: boolean;
  /** Permits held and reserved, the writer among them, after the places that fit. */
  readonly count: number;
  readonly writer: boolean;
}

/** Whether one more permit of `mode` fits beside `count` permits (a writer among them when `writer`). */
export function fits(limit: number | undefined, mode: PermitModeCode, count: number, writer: boolean): boolean {
  if (limit !== undefined) return count < limit;
  if (mode === 'w') return count === 0;
  return !writer;
}

/** A place whose reservation passed unclaimed: it holds nobody back, but keeps its turn until its wait ends. */
export function hasLapsed(place: WaitingPlace, now: number): boolean {
  return place.reservedUntil > 0 && place.reservedUntil <= now;
}

/**
 * Walks the line in order, as the Redis scripts do (scripts/permit.lua.ts, `callLine`): each place that fits
 * beside the holders and the places before it has a permit reserved, for `window` ms when reserved now; the
 * first that does not fit holds back everyone behind it (and loses a reservation it had); lapsed places are
 * passed over. `exclusive`: a mutex lease holds the key, so nothing fits.
 */
export function callLine(
  permits: ReadonlyMap<string, HeldPermit>,
  line: readonly WaitingPlace[],
  limit: number | undefined,
  window: number,
  exclusive: boolean,
  now: number,
): LineCall {
  let count = permits.size;
  let writer = [...permits.values()].some((permit) => permit.mode === 'w');
  let stopped = exclusive;
  let reserved = 0;
  const fitting = new Set<string>();
  for (const place of line) {
    if (hasLapsed(place, now)) continue;
    if (!stopped && fits(limit, place.mode, count, writer)) {
      count++;
      writer ||= place.mode === 'w';
      fitting.add(place.token);
      if (place.reservedUntil === 0) {
        place.reservedUntil = now + window;
        reserved++;
      }
    } else {
      stopped = true;
      place.reservedUntil = 0;
    }
  }
  return { fitting, reserved, stopped, count, writer };
}
