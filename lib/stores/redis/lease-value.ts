import { PERMITS_GUARD, RESERVED_AGAINST, RESERVED_FOR, WAITED_FOR } from './line/line-protocol.js';

/**
 * What a lock key holds in Redis (see scripts/lease.lua.ts): a lease is its token, then a newline and
 * the holder record when it has one, after a leading '!' once a waiter marked it; '>owner' and '~owner' are
 * hand-off reservations, '#' the guard of live permits. Tokens are hex, so none of these can be mistaken for
 * another.
 */
export type StoredLease =
  | { readonly lease: true; readonly token: string; readonly holder?: string; readonly marked: boolean }
  | { readonly lease: false };

/** The value a grant writes: the token, and the holder record after a newline when there is one. */
export function leaseValue(token: string, holder: string | undefined): string {
  return holder === undefined || holder === '' ? token : `${token}\n${holder}`;
}

/** Reads a lock key's value; `undefined` for a missing key. */
export function readStoredLease(value: string | null): StoredLease | undefined {
  if (value === null) return undefined;
  const first = value.charAt(0);
  if (first === RESERVED_FOR || first === RESERVED_AGAINST) return { lease: false };
  const marked = first === WAITED_FOR;
  const body = marked ? value.slice(1) : value;
  // the key is held by permits, not by a mutex lease
  if (body === PERMITS_GUARD) return { lease: false };
  const newline = body.indexOf('\n');
  if (newline < 0) return { lease: true, token: body, marked };
  return { lease: true, token: body.slice(0, newline), holder: body.slice(newline + 1), marked };
}
