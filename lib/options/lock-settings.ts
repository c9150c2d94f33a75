import type { LockDefaults, LockSectionOptions, RetryAfter } from '../interfaces/lock-options.interface.js';
import type { PermitShape } from '../interfaces/permit-store.interface.js';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { checkPermitShape } from './permit-shape.js';
import type { BackoffOptions } from '../utils/backoff.js';
import { MAX_DURATION } from '../utils/duration.js';
import { toMilliseconds } from './duration-option.js';
import { BACKOFF_OPTIONS, checkOptionNames } from './option-names.js';
import { validateBoolean, validateInteger, validateText } from './validate-options.js';

/** Options of one acquisition with every default filled in and every value checked. */
export interface LockSettings {
  readonly ttl: number;
  readonly wait: number;
  readonly retry: BackoffOptions;
  readonly autoRenew: boolean;
  readonly fencing: boolean;
  /** Names the holder in `inspect()`; set per call or by `@WithLock`. */
  readonly label?: string;
  /** The bounded name of the key in events, metrics and spans; set per call or by `@WithLock`. */
  readonly metricKey?: string;
  /** What a refused acquisition tells clients to wait, in seconds; the manager's estimate when absent. */
  readonly retryAfter?: RetryAfter;
  /** How the key shares its permits (`limit` or `mode`); absent for a mutex. */
  readonly shape?: PermitShape;
  /** What a section's call does when its function returns after one of its leases was lost. */
  readonly onLost: 'return' | 'throw';
}

/** The built-in defaults, frozen. */
export const DEFAULT_SETTINGS: LockSettings = Object.freeze({
  ttl: 30_000,
  wait: 0,
  retry: Object.freeze({ minDelay: 50, maxDelay: 1000, factor: 2 }),
  autoRenew: true,
  fencing: false,
  onLost: 'return',
});

/** @default 1024 */
export const DEFAULT_MAX_KEY_LENGTH = 1024;

/** Longest `label` or `metricKey`, in characters. */
export const MAX_LABEL_LENGTH = 256;

/**
 * The shortest lease, in ms. A lease must outlast a round trip to the store, its renewal at a third of the
 * ttl and a garbage-collection pause with room to spare; below this, one slow reply ends it, and the
 * store's clock-drift allowance (2 ms + 1 % by default) eats a real share of it.
 */
export const MIN_TTL = 100;

/** The longest `retryAfter`, in seconds: that of the longest duration. */
const MAX_RETRY_AFTER = Math.floor(MAX_DURATION / 1000);

/**
 * Merges `options` over `base` and validates the result, so bad values fail with a
 * `LockConfigurationError` that names the option (at bootstrap for module and decorator options).
 */
export function resolveSettings(
  base: LockSettings,
  options: LockSectionOptions | LockDefaults | undefined,
  scope = '',
): LockSettings {
  if (!options) return base;
  if (typeof options !== 'object' || Array.isArray(options)) return validateObject(scope || 'options', options);
  const name = (field: string): string => (scope ? `${scope}.${field}` : field);
  const retry = options.retry === undefined ? base.retry : resolveRetry(base.retry, options.retry, name('retry'));
  const label = resolveText(base.label, (options as LockSectionOptions).label, name('label'));
  const metricKey = resolveText(base.metricKey, (options as LockSectionOptions).metricKey, name('metricKey'));
  const retryAfter =
    options.retryAfter === undefined ? base.retryAfter : validateRetryAfter(name('retryAfter'), options.retryAfter);
  const shape = resolveShape(base.shape, options, scope);
  return {
    ttl: options.ttl === undefined ? base.ttl : validateTtl(name('ttl'), options.ttl),
    wait: options.wait === undefined ? base.wait : toMilliseconds(options.wait, name('wait'), { zero: 'allowed' }),
    retry,
    autoRenew: options.autoRenew === undefined ? base.autoRenew : validateBoolean(name('autoRenew'), options.autoRenew),
    fencing: options.fencing === undefined ? base.fencing : validateBoolean(name('fencing'), options.fencing),
    onLost: options.onLost === undefined ? base.onLost : validateOnLost(name('onLost'), options.onLost),
    ...(label === undefined ? {} : { label }),
    ...(metricKey === undefined ? {} : { metricKey }),
    ...(retryAfter === undefined ? {} : { retryAfter }),
    ...(shape === undefined ? {} : { shape }),
  };
}

/** The permit shape `options` ask for (`limit` or `mode`, checked), else the one of `base`. */
function resolveShape(
  base: PermitShape | undefined,
  options: LockSectionOptions,
  scope: string,
): PermitShape | undefined {
  const { limit, mode } = options;
  if (limit === undefined && mode === undefined) return base;
  return checkPermitShape({ limit, mode } as PermitShape, scope);
}

/** Checks a lease length: a duration of at least {@link MIN_TTL}. */
export function validateTtl(option: string, value: unknown): number {
  const ttl = toMilliseconds(value as never, option);
  if (ttl < MIN_TTL) {
    throw new LockConfigurationError(
      option,
      value,
      `expected at least ${MIN_TTL} ms: a lease must outlast a round trip to the store, its renewal at a third of ` +
        'its length and a pause of the event loop, with room to spare',
    );
  }
  return ttl;
}

function validateOnLost(option: string, value: unknown): 'return' | 'throw' {
  if (value === 'return' || value === 'throw') return value;
  throw new LockConfigurationError(option, value, "expected 'return' or 'throw'");
}

function validateRetryAfter(option: string, value: unknown): RetryAfter {
  if (typeof value === 'function') return value as RetryAfter;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_RETRY_AFTER) {
    throw new LockConfigurationError(
      option,
      value,
      `expected whole seconds from 0 to ${MAX_RETRY_AFTER} (what the Retry-After header says), or a function of the contention that returns them`,
    );
  }
  return value;
}

function resolveText(base: string | undefined, given: unknown, option: string): string | undefined {
  return given === undefined ? base : validateText(option, given, MAX_LABEL_LENGTH);
}

function resolveRetry(base: BackoffOptions, retry: Partial<BackoffOptions>, scope: string): BackoffOptions {
  if (typeof retry !== 'object' || retry === null || Array.isArray(retry)) return validateObject(scope, retry);
  checkOptionNames(retry, BACKOFF_OPTIONS, scope);
  const minDelay =
    retry.minDelay === undefined ? base.minDelay : validateInteger(`${scope}.minDelay`, retry.minDelay, 1);
  const maxDelay =
    retry.maxDelay === undefined
      ? Math.max(base.maxDelay, minDelay)
      : validateInteger(`${scope}.maxDelay`, retry.maxDelay, minDelay);
  const factor = retry.factor === undefined ? base.factor : retry.factor;
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 1) {
    throw new LockConfigurationError(`${scope}.factor`, factor, 'expected a finite number of at least 1');
  }
  return { minDelay, maxDelay, factor };
}

function validateObject(option: string, value: unknown): never {
  throw new LockConfigurationError(option, value, 'expected an object');
}
