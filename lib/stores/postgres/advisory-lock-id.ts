import { createHash } from 'node:crypto';

/**
 * The 64-bit advisory lock id of `key`: the first 8 bytes of SHA-256 over `nestjs-lock:` and the key's UTF-8,
 * as a signed bigint (PostgreSQL's `bigint`), in decimal. Two distinct keys share an id with a chance of
 * about n²/2⁶⁵ among n keys (one in 37 million for a million keys), and the prefix keeps the small ids an
 * application picks by hand (`pg_advisory_lock(42)`) from meeting ours but by the same chance.
 * @example advisoryLockId('invoice:42') // '8754635089011177105' (a string: bigints beyond 2⁵³ lose digits as numbers)
 */
export function advisoryLockId(key: string): string {
  const digest = createHash('sha256').update(`nestjs-lock:${key}`, 'utf8').digest();
  return digest.readBigInt64BE(0).toString();
}
