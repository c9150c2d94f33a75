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
   * another): an array, or one string with the members separated by commas. Give `hosts` or `client`.
   * @example ['etcd-0:2379', 'etcd-1:2379', 'etcd-2:2379'], or process.env.ETCD_HOSTS as 'etcd-0:2379,etcd-1:2379'
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
