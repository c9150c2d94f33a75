import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../../interfaces/lock-module-options.interface.js';
import type { StoreFamily } from '../../interfaces/store-family.interface.js';
import { checkOptionNames, type OptionsKind } from '../../options/option-names.js';
import { moduleOptionAdvice, refuseSharedOptions } from '../../options/shared-store-options.js';
import { EtcdLockStore } from './etcd-lock-store.js';
import {
  ETCD_MEMBERS_ELSEWHERE,
  MIN_ETCD_TTL,
  MODULE_ETCD_OPTION_NAMES,
  resolveEtcdOptions,
  type EtcdLockStoreOptions,
} from './etcd-options.js';

/** An etcd store the module creates: the store's options with the module's `keyPrefix`, checked. */
export interface EtcdStorePlan {
  readonly kind: 'etcd';
  readonly options: EtcdLockStoreOptions;
}

/** The module's `etcd` option: the store's options without `keyPrefix`, which the module sets. */
const MODULE_ETCD_OPTIONS: OptionsKind = {
  title: 'etcd options',
  names: MODULE_ETCD_OPTION_NAMES,
  elsewhere: { ...moduleOptionAdvice(['keyPrefix'], 'etcd: { hosts }'), ...ETCD_MEMBERS_ELSEWHERE },
};

/**
 * An etcd cluster (`forRoot({ etcd: { hosts } })`), with the module's `keyPrefix`; the options of Redis stores
 * are refused beside it, and the module's default ttl must be whole seconds' worth (at least 1 s). `etcd3` is
 * loaded when the store first connects.
 */
export const etcdFamily = {
  option: 'etcd',
  expects: '{ hosts: [...] }',
  misplaced: { hosts: 'etcd members go in "etcd": { etcd: { hosts: [...] } }' },
  kinds: ['etcd'],
  plan: (options) => ({ kind: 'etcd', options: planEtcdStore(options) }),
  leaseBounds: () => ({ store: 'EtcdLockStore', minTtl: MIN_ETCD_TTL }),
  build: async (plan) => ({ store: new EtcdLockStore(plan.options), owned: true }),
} satisfies StoreFamily<EtcdStorePlan>;

/**
 * The options of the etcd store that `LockModule.forRoot({ etcd })` creates and owns (with the module's
 * `keyPrefix`), checked before anything connects.
 * @throws LockConfigurationError for an unknown or invalid option, or one of Redis stores given with `etcd`
 *   (it would do nothing)
 */
function planEtcdStore(options: LockModuleOptions): EtcdLockStoreOptions {
  const { etcd } = options;
  if (typeof etcd !== 'object' || etcd === null || Array.isArray(etcd)) {
    throw new LockConfigurationError('etcd', etcd, 'expected { hosts: ["host:2379", ...] }');
  }
  refuseSharedOptions(
    options,
    ['replicaAck', 'releaseNotices', 'handoffWindow', 'acceptEvictionRisk'],
    'applies to Redis stores only; the etcd store wakes waiters by watches and keeps their order in etcd',
  );
  checkOptionNames(etcd, MODULE_ETCD_OPTIONS, 'etcd');
  const planned: EtcdLockStoreOptions = { ...etcd, keyPrefix: options.keyPrefix };
  resolveEtcdOptions(planned);
  return planned;
}
