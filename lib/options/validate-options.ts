import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import type { LockLogger } from '../interfaces/lock-options.interface.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import type { LockTelemetryOptions } from '../interfaces/lock-telemetry-options.interface.js';
import { checkOptionNames, TELEMETRY_OPTIONS } from './option-names.js';
import { printable, quoted } from '../utils/printable.js';

const STORE_METHODS = ['acquire', 'release', 'extend', 'extendMany', 'inspect', 'watch', 'close'] as const;

/** Checks that the options are an object at all, before any field is read. */
export function validateOptionsObject<T extends object>(options: T | undefined): T {
  if (typeof options !== 'object' || options === null) {
    throw new LockConfigurationError('options', options, 'expected an object with at least a "store"');
  }
  return options;
}

/** Checks a lock store: an object with every operation of the `LockStore` contract. */
export function validateStore(store: unknown): LockStore {
  const missing =
    typeof store === 'object' && store !== null
      ? STORE_METHODS.filter((method) => typeof (store as Record<string, unknown>)[method] !== 'function')
      : STORE_METHODS;
  if (missing.length > 0) {
    throw new LockConfigurationError(
      'store',
      store,
      `expected a LockStore (such as RedisLockStore or MemoryLockStore); missing ${missing.join(', ')}`,
    );
  }
  return store as LockStore;
}

/** Checks an optional logger: it must at least have `warn` and `error`. */
export function validateLogger(logger: unknown): LockLogger | undefined {
  if (logger === undefined) return undefined;
  const usable = typeof logger === 'object' && logger !== null;
  if (
    !usable ||
    typeof (logger as LockLogger).warn !== 'function' ||
    typeof (logger as LockLogger).error !== 'function'
  ) {
    throw new LockConfigurationError(
      'logger',
      logger,
      "expected an object with warn() and error() (Nest's Logger fits)",
    );
  }
  return logger as LockLogger;
}

/** Characters a key prefix may not have: glob patterns, escapes and hash-tag braces (see {@link validateKeyPrefix}). */
const PREFIX_SPECIAL = /[*?[\]\\{}]/;

/**
 * Checks a key prefix: a non-empty, printable string without `*`, `?`, `[`, `]`, `\`, `{` or `}`. Empty,
 * lock keys would mix with the application's own keys, and no pattern could find the locks alone; glob
 * characters or a backslash would make `SCAN MATCH <prefix>*` (how an operator lists or clears the locks)
 * match other keys too; braces would break the hash tag that keeps a resource's keys on one Cluster slot;
 * a control character would corrupt every log line that names a key.
 */
export function validateKeyPrefix(prefix: unknown): string {
  const why =
    typeof prefix !== 'string'
      ? 'expected a string'
      : prefix.length === 0
        ? "expected a non-empty prefix such as 'lock:': without one, lock keys mix with the application's own and no pattern finds them alone"
        : printable(prefix) !== prefix
          ? 'expected printable characters only: a control character would corrupt every log line that names a key'
          : PREFIX_SPECIAL.test(prefix)
            ? 'expected no "*", "?", "[", "]", "\\", "{" or "}": glob characters would make SCAN MATCH <prefix>* match other keys ' +
              'than the locks, and braces would break the hash tag that keeps a lock, its fence and its channel on one cluster slot'
            : undefined;
  if (why !== undefined) throw new LockConfigurationError('keyPrefix', prefix, why);
  return prefix as string;
}

/** Checks one resource key: a non-empty string of at most `maxBytes` UTF-8 bytes. */
export function validateKey(key: unknown, maxBytes: number): string {
  if (typeof key !== 'string' || key.length === 0) {
    const message = `A lock key must be a non-empty string; got ${key === '' ? 'an empty string' : typeof key}.`;
    throw new LockKeyError(message, undefined, { clientMessage: message });
  }
  // a UTF-16 unit is at most 3 UTF-8 bytes: a key that short cannot be too long, and is not measured
  if (key.length * 3 <= maxBytes) return key;
  const bytes = Buffer.byteLength(key, 'utf8');
  if (bytes > maxBytes) {
    const tooLong = `is ${bytes} bytes long, over the limit of ${maxBytes} (option maxKeyLength); use a shorter key or hash the long part.`;
    throw new LockKeyError(`A lock key ${tooLong}`, undefined, {
      // the length of a key made from server data would tell something of that data too
      clientMessage: `The lock key is over the limit of ${maxBytes} bytes; use shorter values.`,
      keyedMessage: `Lock key ${quoted(`${Array.from(key).slice(0, 40).join('')}...`)} ${tooLong}`,
    });
  }
  return key;
}

/** Checks `maxKeyLength`: whole bytes from 1 to 512 MiB (the longest Redis string). */
export function validateMaxKeyLength(value: unknown): number {
  return validateInteger('maxKeyLength', value, 1, 512 * 1024 * 1024);
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

/**
 * Checks a short text option (a label, a metric key): a non-empty string of at most `maxLength` characters,
 * printable, since it goes into log lines, metrics and spans.
 */
export function validateText(option: string, value: unknown, maxLength: number): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength || printable(value) !== value) {
    throw new LockConfigurationError(
      option,
      value,
      `expected a non-empty string of at most ${maxLength} characters, without control characters`,
    );
  }
  return value;
}

/** Checks the `telemetry` option: a boolean, or an object of boolean switches. `false` when it is off. */
export function validateTelemetry(value: unknown): LockTelemetryOptions | false {
  if (value === undefined || value === true) return {};
  if (value === false) return false;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LockConfigurationError('telemetry', value, 'expected true, false or { metrics, traces, resolvedKeys }');
  }
  checkOptionNames(value, TELEMETRY_OPTIONS, 'telemetry');
  for (const field of ['metrics', 'traces', 'resolvedKeys'] as const) {
    const option = (value as Record<string, unknown>)[field];
    if (option !== undefined) validateBoolean(`telemetry.${field}`, option);
  }
  return value;
}
