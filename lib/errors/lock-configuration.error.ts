import { printable } from '../utils/printable.js';
import { isSecretOptionName, redactCredentials, redactValue } from '../utils/redact.js';
import { UnshownValue } from './unshown-value.js';
import { LockError } from './lock.error.js';

/**
 * An option has a value that cannot work, or a name no options object has; names the option and what it got.
 * Neither the message nor `value` ever carries a credential: URL passwords are replaced by `***`, and so
 * are password fields of plain objects; other objects are kept by their class name only.
 */
export class LockConfigurationError extends LockError {
  readonly code = 'LOCK_CONFIGURATION' as const;
  /** The value the option got, with credentials removed (see the class description). */
  readonly value: unknown;

  /**
   * @param option the option's name, with its path (`retry.minDelay`, `@WithLock(Job.run).ttl`)
   * @param value what it got
   * @param expectation what it needs instead, and why
   */
  constructor(
    readonly option: string,
    value: unknown,
    readonly expectation: string,
  ) {
    // an option named as a secret (`password`, `sentinelPassword`, a mistyped `pasword`) never shows its value
    // (an object is shown by its class alone, and kept with its secret-named fields hidden: see redactValue)
    const secret = isSecretOptionName(option) && ['string', 'number', 'bigint'].includes(typeof value);
    const shown = secret ? UnshownValue.of(value) : value;
    super(`Invalid nestjs-lock option "${printable(option)}": ${describe(shown)}; ${sentence(expectation)}`);
    this.value = shown instanceof UnshownValue ? `(${shown.description}, not shown)` : redactValue(shown);
  }
}

function describe(value: unknown): string {
  if (value instanceof UnshownValue) return `got ${value.description} (not shown)`;
  if (typeof value === 'string') return `got the string ${printable(JSON.stringify(redactCredentials(value)))}`;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return `got ${value}`;
  if (value === null || value === undefined) return `got ${value}`;
  if (Array.isArray(value)) return 'got an array';
  if (typeof value === 'function') return 'got a function';
  return `got ${typeof value === 'object' ? (value.constructor?.name ?? 'an object') : typeof value}`;
}

/** The expectation as the end of a sentence: a full stop unless it already ends with one (or a question). */
function sentence(text: string): string {
  return /[.?!]$/.test(text) ? text : `${text}.`;
}
