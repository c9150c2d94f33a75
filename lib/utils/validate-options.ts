import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';

/** Checks a key prefix: braces would break the hash tag that keeps a resource's keys on one slot. */
export function validateKeyPrefix(prefix: unknown): string {
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
    throw new LockConfigurationError(
      'keyPrefix',
      prefix,
      'expected a string without "{" or "}" (the module adds its own hash tag so a lock, its fence and its channel share one cluster slot)',
    );
  }
  return prefix;
}

/** Checks one resource key: a non-empty string of at most `maxBytes` UTF-8 bytes. */
export function validateKey(key: unknown, maxBytes: number): string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new LockKeyError(
      `A lock key must be a non-empty string; got ${key === '' ? 'an empty string' : typeof key}.`,
    );
  }
  const bytes = Buffer.byteLength(key, 'utf8');
  if (bytes > maxBytes) {
    throw new LockKeyError(
      `Lock key "${Array.from(key).slice(0, 40).join('')}..." is ${bytes} bytes long, over the limit of ${maxBytes} (option maxKeyLength); ` +
        'use a shorter key or hash the long part.',
    );
  }
  return key;
}

/** Checks a whole number option within bounds. */
export function validateInteger(option: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new LockConfigurationError(option, value, `expected a whole number from ${min} to ${max}`);
  }
  return value;
}

/** Checks a boolean option. */
export function validateBoolean(option: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw new LockConfigurationError(option, value, 'expected true or false');
  return value;
}
