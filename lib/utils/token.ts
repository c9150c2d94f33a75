import { randomBytes } from 'node:crypto';

/** A fresh unguessable token for one acquisition (128 random bits, hex). */
export function newToken(): string {
  return randomBytes(16).toString('hex');
}
