/**
 * What the store keeps for one idempotency key: the digest of the request it answers, and that request's final
 * outcome as the entry point encoded it (`@Idempotent()`: the HTTP response; `idempotent()`: the result).
 */
export interface IdempotencyRecord {
  /** SHA-256 (hex) of the request's fingerprint. */
  readonly request: string;
  /** The outcome, as its entry point encoded it. */
  readonly outcome: string;
}

/** The stored form of a record. */
export function encodeRecord(record: IdempotencyRecord): string {
  return JSON.stringify({ v: 1, q: record.request, o: record.outcome });
}

/** A record from its stored form, or `undefined` for a value this version cannot read (it is then run again). */
export function decodeRecord(stored: string): IdempotencyRecord | undefined {
  try {
    const parsed = JSON.parse(stored) as { v?: unknown; q?: unknown; o?: unknown };
    if (parsed.v !== 1 || typeof parsed.q !== 'string' || typeof parsed.o !== 'string') return undefined;
    return { request: parsed.q, outcome: parsed.o };
  } catch {
    return undefined;
  }
}
