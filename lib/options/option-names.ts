import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockStoreCheckOptions } from '../interfaces/lock-store-check-options.interface.js';
import type { LockDefaults, LockOptions, LockSectionOptions } from '../interfaces/lock-options.interface.js';
import type { LockTelemetryOptions } from '../interfaces/lock-telemetry-options.interface.js';
import type { LockManagerOptions } from '../interfaces/lock-manager-options.interface.js';
import type { WithLockOptions } from '../interfaces/with-lock-options.interface.js';
import type { BackoffOptions } from '../utils/backoff.js';
import { closestName } from './closest-name.js';

/**
 * Every option name of `T`, as a map whose type is checked against `T` (`satisfies OptionNames<T>`): a
 * name added to or removed from the interface without this map fails the type check, so the names a
 * runtime check accepts cannot drift from the names the types document.
 */
export type OptionNames<T> = { readonly [K in keyof Required<T>]: true };

/** What one options object is, for messages, and the names that are known to belong elsewhere. */
export interface OptionsKind {
  /** The known names. */
  readonly names: object;
  /** How messages call this object, e.g. `'LockModule options'`. */
  readonly title: string;
  /** Names that are no option here but a common mistake, each with what to do instead. */
  readonly elsewhere?: Readonly<Record<string, string>>;
}

/** The options of one lease that a call and the module's defaults share. */
const LEASE_OPTIONS = {
  ttl: true,
  wait: true,
  retry: true,
  autoRenew: true,
  fencing: true,
  retryAfter: true,
} as const;

/** What the module's defaults of every lease take: the lease's own options, the key limit, `onLost`. */
export const LOCK_DEFAULT_NAMES = {
  ...LEASE_OPTIONS,
  maxKeyLength: true,
  onLost: true,
} as const satisfies OptionNames<LockDefaults>;

const LOCK_OPTIONS = {
  ...LEASE_OPTIONS,
  label: true,
  metricKey: true,
  limit: true,
  mode: true,
} as const satisfies OptionNames<LockOptions>;

/** {@link LOCK_OPTIONS} and what a lost lease does to a section's result: what `using()` takes. */
const SECTION_OPTIONS = { ...LOCK_OPTIONS, onLost: true } as const satisfies OptionNames<LockSectionOptions>;

/** {@link LOCK_OPTIONS} but `wait`: what `tryAcquire()` takes. */
const { wait: _neverWaits, ...TRY_OPTION_NAMES } = LOCK_OPTIONS;

/** What `onContention` and `holdAtLeast` mean outside `@WithLock`: nothing, and what to do instead. */
export const DECORATOR_ONLY = {
  onContention:
    'it is an option of @WithLock; a direct call throws LockNotAcquiredError on contention (catch it), or use tryAcquire(), which resolves null',
  holdAtLeast:
    'it is an option of @WithLock; with a lock from acquire(), keep it with lock.release(keepFor) instead of deleting it',
};

/** What `onLost` means for a lock handed to the caller: nothing, and what to do instead. */
const SECTION_ONLY = {
  onLost:
    'it is an option of using() and @WithLock, whose result it replaces; a lock from acquire() tells its loss by lock.signal (check lock.isHeld before you commit)',
};

/** `LockManager` constructor options. */
export const MANAGER_OPTIONS: OptionsKind = {
  title: 'LockManager options',
  names: {
    ...LOCK_DEFAULT_NAMES,
    store: true,
    logger: true,
    closeStore: true,
    drainTimeout: true,
    verifyOnFirstUse: true,
    exposeResolvedKeys: true,
  } as const satisfies OptionNames<LockManagerOptions>,
};

/** Options of `acquire()`. */
export const CALL_OPTIONS: OptionsKind = {
  title: 'lock options',
  names: LOCK_OPTIONS,
  elsewhere: { ...DECORATOR_ONLY, ...SECTION_ONLY },
};

/** Options of `using()`. */
export const USING_OPTIONS: OptionsKind = { title: 'lock options', names: SECTION_OPTIONS, elsewhere: DECORATOR_ONLY };

/** Options of `tryAcquire()`, which never waits. */
export const TRY_OPTIONS: OptionsKind = {
  title: 'tryAcquire() options',
  names: TRY_OPTION_NAMES satisfies OptionNames<Omit<LockOptions, 'wait'>>,
  elsewhere: {
    ...DECORATOR_ONLY,
    ...SECTION_ONLY,
    wait: 'tryAcquire() never waits; use acquire(key, { wait }) to wait for the lock',
  },
};

/** `@WithLock` options. */
export const WITH_LOCK_OPTIONS: OptionsKind = {
  title: '@WithLock options',
  names: {
    ...SECTION_OPTIONS,
    onContention: true,
    holdAtLeast: true,
  } as const satisfies OptionNames<WithLockOptions>,
};

/** The `retry` backoff. */
export const BACKOFF_OPTIONS: OptionsKind = {
  title: 'retry options',
  names: { minDelay: true, maxDelay: true, factor: true } as const satisfies OptionNames<BackoffOptions>,
};

/** The `telemetry` switches. */
export const TELEMETRY_OPTIONS: OptionsKind = {
  title: 'telemetry options',
  names: { metrics: true, traces: true, resolvedKeys: true } as const satisfies OptionNames<LockTelemetryOptions>,
};

/** Options of `checkLockStore()` and `LockHealthIndicator.isHealthy()`. */
export const HEALTH_CHECK_OPTIONS: OptionsKind = {
  title: 'health check options',
  names: { timeout: true } as const satisfies OptionNames<LockStoreCheckOptions>,
};

/** How a store's options object is named in a refusal: the option, and what it should look like. */
export interface OptionsObjectShape {
  readonly option: string;
  readonly expected: string;
}

/**
 * Checks that a store's options are an object of known option names.
 * @throws LockConfigurationError naming `shape.option` for anything but an object, or the first unknown name
 */
export function checkOptionsObject(options: unknown, kind: OptionsKind, shape: OptionsObjectShape): void {
  if (typeof options !== 'object' || options === null) {
    throw new LockConfigurationError(shape.option, options, shape.expected);
  }
  checkOptionNames(options, kind);
}

/**
 * Refuses a name `options` has that `kind` does not know, with a `LockConfigurationError` that names the
 * option (under `scope`, e.g. `retry.minDelai`) and suggests the known name it is closest to, or says
 * where it belongs when it is a known mistake. A missing or non-object `options` is left to the caller.
 * @throws LockConfigurationError for the first unknown name
 */
export function checkOptionNames(options: unknown, kind: OptionsKind, scope = ''): void {
  if (typeof options !== 'object' || options === null) return;
  for (const name of Object.keys(options)) {
    if (Object.hasOwn(kind.names, name)) continue;
    const option = scope ? `${scope}.${name}` : name;
    const value = (options as Record<string, unknown>)[name];
    const advice =
      kind.elsewhere !== undefined && Object.hasOwn(kind.elsewhere, name) ? kind.elsewhere[name] : undefined;
    if (advice !== undefined)
      throw new LockConfigurationError(option, value, `it has no meaning in ${kind.title}: ${advice}`);
    const known = Object.keys(kind.names);
    const closest = closestName(name, known);
    throw new LockConfigurationError(
      option,
      value,
      closest === undefined
        ? `${kind.title} have no such option; the known ones are ${known.join(', ')}`
        : `${kind.title} have no such option; did you mean "${closest}"?`,
    );
  }
}
