import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../../interfaces/lock-module-options.interface.js';
import { checkOptionNames, MODULE_ETCD_OPTIONS } from '../../options/option-names.js';
import { resolveEtcdOptions, type EtcdLockStoreOptions } from './etcd-options.js';

/** Options of the module that only a Redis store has a use for. */
const REDIS_ONLY = ['replicaAck', 'releaseNotices', 'handoffWindow', 'acceptEvictionRisk'] as const;

/**
 * The options of the etcd store that `LockModule.forRoot({ etcd })` creates and owns (with the module's
 * `keyPrefix`), checked before anything connects.
 * @throws LockConfigurationError for an unknown or invalid option, or one of Redis stores given with `etcd`
 *   (it would do nothing)
 */
export function planEtcdStore(options: LockModuleOptions): EtcdLockStoreOptions {
  const { etcd } = options;
  if (typeof etcd !== 'object' || etcd === null || Array.isArray(etcd)) {
    throw new LockConfigurationError('etcd', etcd, 'expected { hosts: ["host:2379", ...] }');
  }
  for (const name of REDIS_ONLY) {
    if (options[name] !== undefined) {
      throw new LockConfigurationError(
        name,
        options[name],
        'applies to Redis stores only; the etcd store wakes waiters by watches and keeps their order in etcd',
      );
    }
  }
  checkOptionNames(etcd, MODULE_ETCD_OPTIONS, 'etcd');
  const planned: EtcdLockStoreOptions = { ...etcd, keyPrefix: options.keyPrefix };
  resolveEtcdOptions(planned);
  return planned;
}
