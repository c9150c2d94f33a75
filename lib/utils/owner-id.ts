import { randomBytes } from 'node:crypto';

/**
 * A new id for one store instance (one process's place in a waiting line, its own notice channel): 16 hex
 * digits, random, so two processes never share one and a restarted process never inherits its old places.
 */
export function newOwnerId(): string {
  return randomBytes(8).toString('hex');
}
