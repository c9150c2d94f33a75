import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { redactUrl } from '../../utils/redact.js';
import { validateInteger, validateKeyPrefix } from '../../options/validate-options.js';
import { checkOptionsObject, type OptionNames, type OptionsKind } from '../../options/option-names.js';
import type { Etcd3Client } from './etcd-client.js';
import type { EtcdLockStoreOptions } from '../../interfaces/etcd-store-options.interface.js';
import type { LockModuleOptions } from '../../interfaces/lock-module-options.interface.js';

export type { Etcd3ClientLike, EtcdLockStoreOptions } from '../../interfaces/etcd-store-options.interface.js';

/** The least ttl, in ms, the etcd store grants: etcd counts leases in whole seconds. */
export const MIN_ETCD_TTL = 1000;

/** The store's options that the module's `etcd` option takes: all but `keyPrefix`, which the module sets. */
export const MODULE_ETCD_OPTION_NAMES = {
  hosts: true,
  client: true,
  auth: true,
  credentials: true,
  timeout: true,
  sessionTtl: true,
} as const satisfies OptionNames<NonNullable<LockModuleOptions['etcd']>>;

/** Where etcd members go when given under another name. */
export const ETCD_MEMBERS_ELSEWHERE = { nodes: 'etcd members go in "hosts"', endpoints: 'etcd members go in "hosts"' };

/** `EtcdLockStore` constructor options. */
const ETCD_STORE_OPTIONS: OptionsKind = {
  title: 'EtcdLockStore options',
  names: { ...MODULE_ETCD_OPTION_NAMES, keyPrefix: true } as const satisfies OptionNames<EtcdLockStoreOptions>,
  elsewhere: ETCD_MEMBERS_ELSEWHERE,
};

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
  if (options.auth !== undefined) checkAuth(options.auth);
  checkCredentials(options.credentials);
  return {
    hosts,
    client,
    auth: options.auth,
    credentials: options.credentials,
    keyPrefix: validateKeyPrefix(options.keyPrefix ?? 'lock:'),
    timeout: validateInteger('etcd.timeout', options.timeout ?? 3000, 1, 600_000),
    sessionTtl: validateSessionTtl(options.sessionTtl ?? 5),
  };
}

/** Checks `{ username, password }`, naming the part that is missing or wrong; a password is never shown. */
function checkAuth(auth: unknown): void {
  const expected = 'expected { username: string, password: string }';
  // the value is not shown: it may hold the password
  if (typeof auth !== 'object' || auth === null) throw new LockConfigurationError('etcd.auth', undefined, expected);
  const { username, password } = auth as Record<string, unknown>;
  if (typeof username !== 'string') {
    throw new LockConfigurationError('etcd.auth.username', username, `expected a string: ${expected}`);
  }
  if (typeof password !== 'string') {
    const missing = password === undefined ? 'missing' : 'not a string (its value is not shown)';
    throw new LockConfigurationError('etcd.auth.password', undefined, `the password is ${missing}: ${expected}`);
  }
}

/** Checks the session lease's ttl, which etcd counts in whole seconds (not ms, as every other duration here). */
function validateSessionTtl(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 2 && value <= 3600) return value;
  throw new LockConfigurationError(
    'etcd.sessionTtl',
    value,
    'expected whole seconds from 2 to 3600 (etcd leases count seconds; the default is 5)',
  );
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

/** A member as etcd3 takes it: `host:port` (a name, an IPv4 address or a bracketed IPv6 one), after `http://` or `https://`. */
const MEMBER = /^(?:https?:\/\/)?(?:\[[0-9a-f:.]+\]|[^\s:/@[\],]+):(\d{1,5})$/i;

/** What a member must look like, for messages. */
const MEMBER_FORM =
  'expected a member as "host:port" (the client port, usually 2379), optionally after http:// or https://';

/**
 * The members of `hosts`: one, an array, or several in one string separated by commas (the usual form of an
 * environment variable, `ETCD_HOSTS=a:2379,b:2379`).
 * @throws LockConfigurationError naming a member without a port or otherwise not `host:port`
 */
function validateHosts(hosts: unknown): string[] {
  const list = typeof hosts === 'string' ? hosts.split(',').map((host) => host.trim()) : hosts;
  if (!Array.isArray(list) || list.length === 0) {
    throw new LockConfigurationError(
      'etcd.hosts',
      hosts,
      'expected a member "host:port", several separated by commas, or a non-empty array of them',
    );
  }
  list.forEach((host: unknown, index) => {
    const port = typeof host === 'string' ? MEMBER.exec(host)?.[1] : undefined;
    if (port !== undefined && Number(port) >= 1 && Number(port) <= 65_535) return;
    const option = Array.isArray(hosts) ? `etcd.hosts[${index}]` : 'etcd.hosts';
    throw new LockConfigurationError(option, typeof host === 'string' ? redactUrl(host) : host, MEMBER_FORM);
  });
  return [...(list as string[])];
}

/**
 * Refuses TLS credentials etcd3 could not use: it would fail every call instead. Only an object is kept on the
 * error (its private key hidden, its Buffers by their class name: see redactValue); any other value is not
 * shown: it may be a key.
 * @throws LockConfigurationError for anything but `{ rootCertificate }` with Buffers, `privateKey` and
 *   `certChain` together
 */
function checkCredentials(credentials: unknown): void {
  if (credentials === undefined) return;
  const object = typeof credentials === 'object' && credentials !== null;
  const { rootCertificate, privateKey, certChain } = (object ? credentials : {}) as Record<string, unknown>;
  const usable =
    object &&
    Buffer.isBuffer(rootCertificate) &&
    (privateKey === undefined || Buffer.isBuffer(privateKey)) &&
    (certChain === undefined || Buffer.isBuffer(certChain)) &&
    (privateKey === undefined) === (certChain === undefined);
  if (usable) return;
  throw new LockConfigurationError(
    'etcd.credentials',
    object ? credentials : undefined,
    `${object ? '' : `a ${typeof credentials} (not shown: it may be a key) cannot be TLS credentials; `}` +
      "expected { rootCertificate } (a Buffer: the CA that signed the members' certificates, e.g. " +
      'readFileSync("ca.pem")), with privateKey and certChain (Buffers) together for a client certificate',
  );
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
