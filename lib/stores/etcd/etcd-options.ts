import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { validateInteger, validateKeyPrefix } from '../../options/validate-options.js';
import { checkOptionNames, ETCD_STORE_OPTIONS } from '../../options/option-names.js';
import type { Etcd3Client } from './etcd-client.js';

/**
 * An `etcd3` client (`new Etcd3({ hosts })` from the `etcd3` package), as far as its type is checked here; the
 * store checks at construction that it has the gRPC services it uses.
 */
export interface Etcd3ClientLike {
  readonly kv: object;
  readonly leaseClient: object;
  readonly watchClient: object;
  readonly maintenance: object;
  close(): void;
}

/** Options of {@link EtcdLockStore} (and of `LockModule.forRoot({ etcd })`). */
export interface EtcdLockStoreOptions {
  /**
   * The cluster's members, as `host:port` or `http://host:port` (every member, so that a failover finds
   * another). Give `hosts` or `client`.
   * @example ['etcd-0:2379', 'etcd-1:2379', 'etcd-2:2379']
   */
  readonly hosts?: string | readonly string[];
  /** An `etcd3` client (`new Etcd3(...)`) of your own, instead of `hosts`: never closed by the store. */
  readonly client?: Etcd3ClientLike;
  /** User and password, when the cluster has authentication on. */
  readonly auth?: { readonly username: string; readonly password: string };
  /** TLS: the CA that signed the members' certificates, and a client certificate when they ask for one. */
  readonly credentials?: {
    readonly rootCertificate: Buffer;
    readonly privateKey?: Buffer;
    readonly certChain?: Buffer;
  };
  /** Namespace of every key. @default 'lock:' */
  readonly keyPrefix?: string;
  /**
   * Deadline of each call to the cluster, in ms (a call the client retries on another member gets a new
   * one); also how long a keep-alive answer may take before the renewal counts as failed. @default 3000
   */
  readonly timeout?: number;
  /**
   * TTL in whole seconds of the session lease that this process's places in lines of waiters hang on: how
   * long a crashed waiter can keep the next one waiting. At least 2 (etcd's least lease). @default 5
   */
  readonly sessionTtl?: number;
}

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
  if (typeof options !== 'object' || options === null) {
    throw new LockConfigurationError('etcd', options, 'expected { hosts: ["host:2379", ...] } or { client }');
  }
  checkOptionNames(options, ETCD_STORE_OPTIONS);
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
