import type { PermitModeCode } from '../shared/permit-codes.js';

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

/** How many permits a resource has out, and whether the writer is among them (readers-writer only). */
export interface Holders {
  readonly count: number;
  readonly writer: boolean;
}

/** What {@link callLine} goes by. */
export interface LineRules {
  /** The semaphore's limit; `undefined` for a readers-writer resource. */
  readonly limit: number | undefined;
  /** How long a permit reserved now stays reserved, in ms. */
  readonly window: number;
  /** Whether a mutex lease holds the key, so that nothing fits. */
  readonly exclusive: boolean;
  /** `performance.now()` of the call. */
  readonly now: number;
}

/** What {@link callLine} found. */
export interface LineCall extends Holders {
  /** The tokens of the places that fit (each has a permit reserved). */
  readonly fitting: ReadonlySet<string>;
  /** How many places it reserved a permit for just now (their waiters are to be told). */
  readonly reserved: number;
  /** Whether a place that does not fit (or a mutex lease) holds back everyone behind it. */
  readonly stopped: boolean;
  /** Permits held and reserved, the writer among them, after the places that fit (its {@link Holders}). */
}

/** Whether one more permit of `mode` fits beside the `holders`. */
export function fits(limit: number | undefined, mode: PermitModeCode, holders: Holders): boolean {
  if (limit !== undefined) return holders.count < limit;
  if (mode === 'w') return holders.count === 0;
  return !holders.writer;
}

/** A place whose reservation passed unclaimed: it holds nobody back, but keeps its turn until its wait ends. */
export function hasLapsed(place: WaitingPlace, now: number): boolean {
  return place.reservedUntil > 0 && place.reservedUntil <= now;
}

/**
 * Walks the line in order, as the Redis scripts do (scripts/permit.lua.ts, `callLine`): each place that fits
 * beside the holders and the places before it has a permit reserved, for the window when reserved now; the
 * first that does not fit holds back everyone behind it (and loses a reservation it had); lapsed places are
 * passed over. (Redis also passes over every place of a process presumed gone, `passOverGone`; here every
 * place is this process's.)
 */
export function callLine(
  permits: ReadonlyMap<string, HeldPermit>,
  line: readonly WaitingPlace[],
  { limit, window, exclusive, now }: LineRules,
): LineCall {
  let count = permits.size;
  let writer = [...permits.values()].some((permit) => permit.mode === 'w');
  let stopped = exclusive;
  let reserved = 0;
  const fitting = new Set<string>();
  for (const place of line) {
    if (hasLapsed(place, now)) continue;
    if (!stopped && fits(limit, place.mode, { count, writer })) {
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
