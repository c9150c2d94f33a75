import { readStoredLease } from '../../lib/stores/redis/lease-value.js';

/** The token of the lease a lock key's value holds (the value also carries the holder record); else `null`. */
export function storedToken(value: string | null): string | null {
  const stored = readStoredLease(value);
  return stored?.lease ? stored.token : null;
}
