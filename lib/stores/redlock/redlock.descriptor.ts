import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../../interfaces/lock-module-options.interface.js';
import type { StoreFamily } from '../../interfaces/store-family.interface.js';
import { checkOptionNames, type OptionsKind } from '../../options/option-names.js';
import { moduleOptionAdvice, refuseSharedOptions, sharedStoreOptions } from '../../options/shared-store-options.js';
import {
  checkRedlockStoreOptions,
  MODULE_REDLOCK_OPTION_NAMES,
  type RedlockStoreOptions,
  type RedlockStoreSettings,
} from './redlock-options.js';
import { redlockClockDrift } from './redlock-validity.js';
import { RedlockStore } from './redlock.store.js';

/** A Redlock store the module creates: the store's options (the module's shared ones merged in), checked. */
export interface RedlockStorePlan {
  readonly kind: 'redlock';
  readonly options: RedlockStoreOptions;
  readonly settings: RedlockStoreSettings;
}

/** The module's `redlock` option: the store's options without those the module sets for every store. */
const MODULE_REDLOCK_OPTIONS: OptionsKind = {
  title: 'redlock options',
  names: MODULE_REDLOCK_OPTION_NAMES,
  elsewhere: moduleOptionAdvice(
    ['keyPrefix', 'releaseNotices', 'handoffWindow', 'acceptEvictionRisk'],
    'redlock: { nodes }',
  ),
};

/**
 * A quorum over independent Redis nodes (`forRoot({ redlock: { nodes } })`); the module's `keyPrefix`,
 * `releaseNotices`, `handoffWindow` and `acceptEvictionRisk` apply to it, and the module checks its default ttl
 * against the store's clock-drift allowance (`driftFactor`).
 */
export const redlockFamily = {
  option: 'redlock',
  expects: '{ nodes: [...] }',
  misplaced: { nodes: 'Redlock nodes go in "redlock": { redlock: { nodes: [...] } }' },
  kinds: ['redlock'],
  plan: planRedlock,
  leaseBounds: ({ settings }) => ({
    store: 'RedlockStore',
    clockDrift: (ttl) => redlockClockDrift(ttl, settings.driftFactor),
    handoffWindow: settings.handoffWindow,
  }),
  build: async (plan) => ({ store: new RedlockStore(plan.options), owned: true }),
} satisfies StoreFamily<RedlockStorePlan>;

function planRedlock(options: LockModuleOptions): RedlockStorePlan {
  const redlock = options.redlock;
  if (typeof redlock !== 'object' || redlock === null || Array.isArray(redlock)) {
    throw new LockConfigurationError('redlock', redlock, 'expected { nodes: [...] }');
  }
  refuseSharedOptions(
    options,
    ['replicaAck'],
    'replicas belong to one Redis: a Redlock quorum takes the place of replica acknowledgement',
  );
  checkOptionNames(redlock, MODULE_REDLOCK_OPTIONS, 'redlock');
  // replicaAck was refused above: what is left of the shared options applies to the Redlock store
  const shared = sharedStoreOptions(options);
  const merged: RedlockStoreOptions = { ...redlock, ...shared };
  try {
    return { kind: 'redlock', options: merged, settings: checkRedlockStoreOptions(merged) };
  } catch (error) {
    throw inRedlock(error, Object.keys(shared));
  }
}

/** Names an option of the Redlock store by where the module options have it (`redlock.nodes`). */
function inRedlock(error: unknown, moduleLevel: readonly string[]): unknown {
  if (!(error instanceof LockConfigurationError) || moduleLevel.includes(error.option)) return error;
  return new LockConfigurationError(`redlock.${error.option}`, error.value, error.expectation);
}
