import { createHash } from 'node:crypto';

/**
 * The name of an idempotency key in the store: the SHA-256 of its scope and the key (hex), so neither the
 * client's key nor the scope's values (a user id) sit in the store, its logs or its key listings in clear.
 * Distinct (scope, key) pairs never share a name: the scope's length comes first.
 */
export function recordKeyOf(scope: string, key: string): string {
  return createHash('sha256').update(`${scope.length}:${scope}\n${key}`).digest('hex');
}

/** The lock a first request holds while it runs: one per record, in the lock store's own key space. */
export function claimKeyOf(recordKey: string): string {
  return `idempotency:${recordKey}`;
}

/** The SHA-256 of `text` (hex): what a stored record keeps of a request's fingerprint. */
export function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
