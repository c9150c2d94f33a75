import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../interfaces/lock-module-options.interface.js';

/**
 * The module options that shape a store the module creates rather than the locks (`forRoot({ keyPrefix, redis })`):
 * a family takes those it has a use for and refuses the others, so that none is silently ignored.
 */
export const SHARED_STORE_OPTIONS = [
  'keyPrefix',
  'releaseNotices',
  'handoffWindow',
  'replicaAck',
  'acceptEvictionRisk',
] as const;

/** One of {@link SHARED_STORE_OPTIONS}. */
export type SharedStoreOption = (typeof SHARED_STORE_OPTIONS)[number];

/**
 * What to tell a user who gives one of `names` inside a family's own options: it is a module option, shown
 * beside `family` as the module options take it (e.g. `'etcd: { hosts }'`).
 */
export function moduleOptionAdvice(
  names: readonly SharedStoreOption[],
  family: string,
): Readonly<Record<string, string>> {
  return Object.fromEntries(
    names.map((name) => [name, `it is a module option: LockModule.forRoot({ ${name}, ${family} })`]),
  );
}

/** The shared options the module options give, as a store's own options take them. */
export type SharedStoreOptions = Pick<LockModuleOptions, SharedStoreOption>;

/** The shared options that `options` give (those left `undefined` are left out, so a store's defaults apply). */
export function sharedStoreOptions(options: LockModuleOptions): SharedStoreOptions {
  return Object.fromEntries(
    SHARED_STORE_OPTIONS.filter((name) => options[name] !== undefined).map((name) => [name, options[name]]),
  );
}

/**
 * Refuses the first of `names` that `options` give, for a store that has no use for it.
 * @param why what the message says after the option and its value
 * @throws LockConfigurationError naming that option
 */
export function refuseSharedOptions(
  options: LockModuleOptions,
  names: readonly SharedStoreOption[],
  why: string,
): void {
  const given = names.find((name) => options[name] !== undefined);
  if (given !== undefined) throw new LockConfigurationError(given, options[given], why);
}
