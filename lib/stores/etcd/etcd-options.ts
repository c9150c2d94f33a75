import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { validateInteger, validateKeyPrefix } from '../../options/validate-options.js';
import { checkOptionsObject, ETCD_STORE_OPTIONS } from '../../options/option-names.js';
import type { Etcd3Client } from './etcd-client.js';
import type { EtcdLockStoreOptions } from '../../interfaces/etcd-store-options.interface.js';

export type { Etcd3ClientLike, EtcdLockStoreOptions } from '../../interfaces/etcd-store-options.interface.js';

/** The least ttl, in ms, the etcd store grants: etcd counts leases in whole seconds. */
export const MIN_ETCD_TTL = 1000;

/** Options with their defaults, checked. */
export interface ResolvedEtcdOptions {
  readonly hosts: readonly string[];
  readonly client?: Etcd3Client;
  readonly auth?: EtcdLockStoreOptions['auth'];
  readonly credentials?: EtcdLockStoreOptions['credentials'];
  readonly keyPrefix: string;
  readonly timeout: number;
  readonly sessionTtl: number;
}

/** Checks the options of an etcd store and fills in the defaults. */
export function resolveEtcdOptions(options: EtcdLockStoreOptions): ResolvedEtcdOptions {
  checkOptionsObject(options, ETCD_STORE_OPTIONS, {
    option: 'etcd',
    expected: 'expected { hosts: ["host:2379", ...] } or { client }',
  });
  const client = options.client as unknown;
  if (client !== undefined && options.hosts !== undefined) {
    throw new LockConfigurationError('etcd.client', client, 'give "hosts" or "client", not both');
  }
  if (client !== undefined && !isEtcdClient(client)) {
    throw new LockConfigurationError('etcd.client', client, 'expected an etcd3 client (new Etcd3({ hosts }))');
  }
  const hosts = client === undefined ? validateHosts(options.hosts) : [];
  if (options.auth !== undefined) {
    const { auth } = options;
    if (
      typeof auth !== 'object' ||
      auth === null ||
      typeof auth.username !== 'string' ||
      typeof auth.password !== 'string'
    ) {
      // the value is not shown: it may hold the password
      throw new LockConfigurationError('etcd.auth', undefined, 'expected { username: string, password: string }');
    }
  }
  return {
    hosts,
    client,
    auth: options.auth,
    credentials: options.credentials,
    keyPrefix: validateKeyPrefix(options.keyPrefix ?? 'lock:'),
    timeout: validateInteger('etcd.timeout', options.timeout ?? 3000, 1, 600_000),
    sessionTtl: validateInteger('etcd.sessionTtl', options.sessionTtl ?? 5, 2, 3600),
  };
}

/** Whole seconds of the etcd lease behind a ttl of `ttl` ms (rounded up: the lease outlives no less than asked). */
export function leaseSeconds(ttl: number): number {
  return Math.ceil(ttl / 1000);
}

/**
 * Refuses a ttl the etcd store cannot honour: etcd leases are whole seconds, and one rounded up from a few ms
 * would keep a crashed holder's resource for up to a second more than the caller planned for.
 * @throws LockConfigurationError for a ttl under 1000 ms
 */
export function validateEtcdTtl(ttl: number): void {
  if (ttl < MIN_ETCD_TTL) {
    throw new LockConfigurationError(
      'ttl',
      ttl,
      `the etcd store counts leases in whole seconds: give a ttl of at least ${MIN_ETCD_TTL} ms (1 s)`,
    );
  }
}

function validateHosts(hosts: unknown): string[] {
  const list = typeof hosts === 'string' ? [hosts] : hosts;
  if (!Array.isArray(list) || list.length === 0 || list.some((host) => typeof host !== 'string' || host === '')) {
    throw new LockConfigurationError('etcd.hosts', hosts, 'expected a member "host:port" or a non-empty array of them');
  }
  return [...(list as string[])];
}

function isEtcdClient(value: unknown): value is Etcd3Client {
  const client = value as Etcd3Client;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof client.kv?.txn === 'function' &&
    typeof client.leaseClient?.leaseGrant === 'function' &&
    typeof client.watchClient?.watch === 'function'
  );
}
