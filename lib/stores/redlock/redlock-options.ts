import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { MAX_DURATION } from '../../utils/duration.js';
import { checkOptionsObject, type OptionNames, type OptionsKind } from '../../options/option-names.js';
import { validateBoolean, validateInteger, validateKeyPrefix } from '../../options/validate-options.js';
import { DEFAULT_HANDOFF_WINDOW } from '../shared/handoff-window.js';
import type { LockModuleOptions } from '../../interfaces/lock-module-options.interface.js';
import type { RedlockStoreOptions } from '../../interfaces/redlock-store-options.interface.js';
import { checkNodes, type CheckedNode } from './redlock-nodes.js';

export type { RedlockStoreOptions } from '../../interfaces/redlock-store-options.interface.js';

/** The store's options that the module's `redlock` option takes: all but those the module sets for every store. */
export const MODULE_REDLOCK_OPTION_NAMES = {
  nodes: true,
  driftFactor: true,
  timeout: true,
} as const satisfies OptionNames<NonNullable<LockModuleOptions['redlock']>>;

/** `RedlockStore` constructor options. */
const REDLOCK_STORE_OPTIONS: OptionsKind = {
  title: 'RedlockStore options',
  names: {
    ...MODULE_REDLOCK_OPTION_NAMES,
    keyPrefix: true,
    releaseNotices: true,
    handoffWindow: true,
    acceptEvictionRisk: true,
  } as const satisfies OptionNames<RedlockStoreOptions>,
};

/** {@link RedlockStoreOptions} checked, the nodes not yet connected. */
export interface RedlockStoreSettings {
  readonly nodes: readonly CheckedNode[];
  readonly keyPrefix: string;
  readonly driftFactor: number;
  readonly timeout: number;
  readonly releaseNotices: boolean;
  readonly handoffWindow: number;
  readonly acceptEvictionRisk: boolean;
}

/**
 * Checks every option of a `RedlockStore` without connecting to anything.
 * @throws LockConfigurationError naming the option
 */
export function checkRedlockStoreOptions(options: RedlockStoreOptions): RedlockStoreSettings {
  checkOptionsObject(options, REDLOCK_STORE_OPTIONS, {
    option: 'redlock',
    expected: 'expected an options object with `nodes`',
  });
  const driftFactor = options.driftFactor ?? DEFAULT_DRIFT_FACTOR;
  if (typeof driftFactor !== 'number' || !(driftFactor >= 0 && driftFactor < 1 / 3)) {
    throw new LockConfigurationError(
      'driftFactor',
      options.driftFactor,
      'expected a number from 0 up to (not including) 1/3, the share of a TTL allowed for clock drift: a lease ' +
        'is renewed at a third of its ttl, and must still be valid then',
    );
  }
  return {
    nodes: checkNodes(options.nodes),
    keyPrefix: validateKeyPrefix(options.keyPrefix ?? 'lock:'),
    driftFactor,
    timeout: validateInteger('timeout', options.timeout ?? 200, 1, MAX_DURATION),
    releaseNotices: validateBoolean('releaseNotices', options.releaseNotices ?? true),
    handoffWindow: validateInteger('handoffWindow', options.handoffWindow ?? DEFAULT_HANDOFF_WINDOW, 0, MAX_DURATION),
    acceptEvictionRisk: validateBoolean('acceptEvictionRisk', options.acceptEvictionRisk ?? false),
  };
}

/** @default 0.01 */
const DEFAULT_DRIFT_FACTOR = 0.01;
