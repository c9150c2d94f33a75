import { LockConfigurationError } from './errors/lock-configuration.error.js';
import type { LockModuleOptions } from './interfaces/lock-module-options.interface.js';
import type { LockDefaults, LockLogger } from './interfaces/lock-options.interface.js';
import type { LockTelemetryOptions } from './interfaces/lock-telemetry-options.interface.js';
import type { LeaseBounds, StorePlan } from './interfaces/store-family.interface.js';
import { clockDrift } from './core/lock.js';
import { DEFAULT_DRAIN_TIMEOUT } from './core/lock-manager.js';
import type { ASYNC_OPTIONS_TYPE } from './lock.module-definition.js';
import { toMilliseconds } from './options/duration-option.js';
import { checkDriftAllowance, checkHandoffWindow, checkStoreMinimum } from './options/lease-bounds.js';
import { DEFAULT_SETTINGS, resolveSettings } from './options/lock-settings.js';
import {
  checkOptionNames,
  DECORATOR_ONLY,
  LOCK_DEFAULT_NAMES,
  type OptionNames,
  type OptionsKind,
} from './options/option-names.js';
import {
  validateBoolean,
  validateLogger,
  validateMaxKeyLength,
  validateTelemetry,
} from './options/validate-options.js';
import { familyOf, planStore, STORE_FAMILIES, type StoreOption } from './stores/registry.js';

/** The module's own options, beside its lease defaults and the option of each store family. */
const MODULE_NAMES = {
  store: true,
  keyPrefix: true,
  releaseNotices: true,
  handoffWindow: true,
  replicaAck: true,
  acceptEvictionRisk: true,
  verifyOnStartup: true,
  interceptor: true,
  exposeResolvedKeys: true,
  drainTimeout: true,
  logger: true,
  telemetry: true,
} as const satisfies OptionNames<Omit<LockModuleOptions, keyof LockDefaults | StoreOption>>;

/** `LockModule.forRoot()` options, and what a `forRootAsync()` factory returns. */
export const MODULE_OPTIONS: OptionsKind = {
  title: 'LockModule options',
  names: {
    ...LOCK_DEFAULT_NAMES,
    ...Object.fromEntries(STORE_FAMILIES.flatMap((family) => ('option' in family ? [[family.option, true]] : []))),
    ...MODULE_NAMES,
  },
  elsewhere: {
    ...Object.fromEntries(
      STORE_FAMILIES.flatMap((family) => ('misplaced' in family ? Object.entries(family.misplaced) : [])),
    ),
    isGlobal: 'it is an option of forRoot() / forRootAsync() themselves, not of the options a factory returns',
    label: 'it names one acquisition: give it per call or per @WithLock',
    metricKey: 'it names one acquisition: give it per call or per @WithLock',
    limit: "it is the shape of one key's locks: give it per call or per @WithLock",
    mode: "it is the shape of one key's locks: give it per call or per @WithLock",
    ...DECORATOR_ONLY,
  },
};

/** `LockModule.forRootAsync()` options (those of Nest's `ConfigurableModuleBuilder`, and `isGlobal`). */
export const ASYNC_MODULE_OPTIONS: OptionsKind = {
  title: 'LockModule.forRootAsync() options',
  names: {
    imports: true,
    inject: true,
    useFactory: true,
    useClass: true,
    useExisting: true,
    provideInjectionTokensFrom: true,
    isGlobal: true,
  } as const satisfies OptionNames<typeof ASYNC_OPTIONS_TYPE>,
};

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
  /** The store to build (see `createStore`). */
  readonly store: StorePlan;
  /** What to log at startup about that store once the module built it (the memory store's warning). */
  readonly storeWarning?: string;
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
  const family = familyOf(store);
  checkLeaseBounds(family.leaseBounds(store), resolveSettings(DEFAULT_SETTINGS, defaults).ttl);
  if (options.interceptor !== undefined) validateBoolean('interceptor', options.interceptor);
  return {
    defaults,
    ...(logger === undefined ? {} : { logger }),
    verifyOnStartup: validateBoolean('verifyOnStartup', options.verifyOnStartup ?? true),
    exposeResolvedKeys: validateBoolean('exposeResolvedKeys', options.exposeResolvedKeys ?? false),
    drainTimeout: toMilliseconds(options.drainTimeout ?? DEFAULT_DRAIN_TIMEOUT, 'drainTimeout', { zero: 'allowed' }),
    telemetry: validateTelemetry(options.telemetry),
    store,
    ...(family.warning === undefined ? {} : { storeWarning: family.warning }),
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
 * The module's default ttl against the store it will use: the least lease it grants, its clock-drift
 * allowance (Redlock's `driftFactor`) and its hand-off window, checked before the store exists.
 */
function checkLeaseBounds(bounds: LeaseBounds, ttl: number): void {
  checkStoreMinimum(bounds.minTtl, bounds.store, ttl, 'ttl');
  checkDriftAllowance(ttl, bounds.clockDrift?.(ttl) ?? clockDrift(ttl), 'ttl');
  checkHandoffWindow(bounds.handoffWindow, ttl, 'handoffWindow');
}
