import { LockError } from './lock.error.js';

/** An option has a value that cannot work; names the option and the value it got. */
export class LockConfigurationError extends LockError {
  readonly code = 'LOCK_CONFIGURATION' as const;

  constructor(
    readonly option: string,
    readonly value: unknown,
    expectation: string,
  ) {
    super(`Invalid nestjs-lock option "${option}": ${describe(value)}; ${expectation}.`);
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `got the string ${JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return `got ${value}`;
  if (value === null || value === undefined) return `got ${value}`;
  if (Array.isArray(value)) return 'got an array';
  return `got ${typeof value === 'object' ? (value.constructor?.name ?? 'an object') : typeof value}`;
}
