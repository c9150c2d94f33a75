import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../interfaces/lock-module-options.interface.js';
import type { LockDefaults, LockLogger } from '../interfaces/lock-options.interface.js';
import type { LockTelemetryOptions } from '../interfaces/lock-telemetry-options.interface.js';
import { clockDrift } from '../core/lock.js';
import { DEFAULT_DRAIN_TIMEOUT } from '../core/lock-manager.js';
import { redlockClockDrift } from '../stores/redlock/redlock-validity.js';
import { toMilliseconds } from '../utils/duration.js';
import { checkDriftAllowance, checkHandoffWindow, checkStoreMinimum } from './lease-bounds.js';
import { MIN_ETCD_TTL } from '../stores/etcd/etcd-options.js';
import { DEFAULT_SETTINGS, resolveSettings } from './lock-settings.js';
import { checkOptionNames, MODULE_OPTIONS } from './option-names.js';
import { planStore, type StorePlan } from './store-plan.js';
import { validateBoolean, validateLogger, validateMaxKeyLength, validateTelemetry } from './validate-options.js';

/** The module options, every one checked, in the shape each part of the module uses. */
export interface CheckedModuleOptions {
  /** The defaults of every acquisition, for the manager. */
  readonly defaults: LockDefaults;
  readonly logger?: LockLogger;
  readonly verifyOnStartup: boolean;
  readonly exposeResolvedKeys: boolean;
  /** How long a shutdown lets holders finish, in ms. */
  readonly drainTimeout: number;
  readonly telemetry: LockTelemetryOptions | false;
  readonly store: StorePlan;
}

/**
 * Checks every module option, names included, and decides the store, before anything is connected: a
 * bootstrap that refuses its options leaves nothing open.
 * @throws LockConfigurationError naming the first option that cannot work
 */
export function checkModuleOptions(value: unknown): CheckedModuleOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LockConfigurationError(
      'options',
      value,
      'expected an object (does the forRootAsync() factory return its options?)',
    );
  }
  const options = value as LockModuleOptions;
  checkOptionNames(options, MODULE_OPTIONS);
  const logger = validateLogger(options.logger);
  const defaults = moduleDefaults(options);
  const store = planStore(options);
  checkLeaseBounds(store, resolveSettings(DEFAULT_SETTINGS, defaults).ttl);
  if (options.interceptor !== undefined) validateBoolean('interceptor', options.interceptor);
  return {
    defaults,
    ...(logger === undefined ? {} : { logger }),
    verifyOnStartup: validateBoolean('verifyOnStartup', options.verifyOnStartup ?? true),
    exposeResolvedKeys: validateBoolean('exposeResolvedKeys', options.exposeResolvedKeys ?? false),
    drainTimeout: toMilliseconds(options.drainTimeout ?? DEFAULT_DRAIN_TIMEOUT, 'drainTimeout', { zero: 'allowed' }),
    telemetry: validateTelemetry(options.telemetry),
    store,
  };
}

/** The acquisition defaults among the module options, checked. */
function moduleDefaults(options: LockModuleOptions): LockDefaults {
  const { ttl, wait, retry, autoRenew, fencing, maxKeyLength, retryAfter, onLost } = options;
  const defaults = Object.fromEntries(
    Object.entries({ ttl, wait, retry, autoRenew, fencing, maxKeyLength, retryAfter, onLost }).filter(
      ([, field]) => field !== undefined,
    ),
  ) as LockDefaults;
  resolveSettings(DEFAULT_SETTINGS, defaults);
  if (maxKeyLength !== undefined) validateMaxKeyLength(maxKeyLength);
  return defaults;
}

/**
 * The module's default ttl against the store it will use: the drift allowance (Redlock's `driftFactor`) and
 * the hand-off window, checked before the store exists.
 */
function checkLeaseBounds(store: StorePlan, ttl: number): void {
  let drift = clockDrift(ttl);
  let window: number | undefined;
  if (store.kind === 'given') {
    drift = store.store.clockDrift?.(ttl) ?? drift;
    window = store.store.handoffWindow;
    checkStoreMinimum(store.store.minTtl, store.store.constructor.name, ttl, 'ttl');
  } else if (store.kind === 'etcd') {
    checkStoreMinimum(MIN_ETCD_TTL, 'EtcdLockStore', ttl, 'ttl');
  } else if (store.kind === 'redlock') {
    drift = redlockClockDrift(ttl, store.settings.driftFactor);
    window = store.settings.handoffWindow;
  } else {
    window = store.settings.handoffWindow;
  }
  checkDriftAllowance(ttl, drift, 'ttl');
  checkHandoffWindow(window, ttl, 'handoffWindow');
}
