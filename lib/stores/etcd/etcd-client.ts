import { LockConfigurationError } from '../../errors/lock-configuration.error.js';

/** An int64 as etcd3 (the npm client) carries it: a decimal string in replies, a string or number in requests. */
type Int64 = string | number;

/** A key-value pair as etcd returns it. */
export interface EtcdKeyValue {
  readonly key: Buffer;
  readonly value: Buffer;
  readonly create_revision: string;
  readonly mod_revision: string;
  readonly lease: string;
}

/** The header of every etcd reply. */
export interface EtcdHeader {
  readonly revision: string;
  readonly member_id?: string;
}

/** One comparison of a transaction (a key, or a key range with `range_end`). */
export interface EtcdCompare {
  readonly key: Buffer;
  readonly range_end?: Buffer;
  readonly target: 'Create' | 'Mod' | 'Value' | 'Lease' | 'Version';
  readonly result: 'Equal' | 'Greater' | 'Less' | 'NotEqual';
  readonly create_revision?: Int64;
  readonly mod_revision?: Int64;
  readonly value?: Buffer;
  readonly lease?: Int64;
}

/** One operation of a transaction. */
export interface EtcdRequestOp {
  readonly request_range?: {
    readonly key: Buffer;
    readonly range_end?: Buffer;
    readonly limit?: Int64;
    readonly sort_order?: 'Ascend' | 'Descend';
    readonly sort_target?: 'Create' | 'Key';
    /** Only the keys, without their values. */
    readonly keys_only?: boolean;
    /** Only how many keys the range holds (`count`). */
    readonly count_only?: boolean;
  };
  readonly request_put?: {
    readonly key: Buffer;
    readonly value?: Buffer;
    readonly lease?: Int64;
    readonly ignore_value?: boolean;
  };
  readonly request_delete_range?: { readonly key: Buffer; readonly prev_kv?: boolean };
  readonly request_txn?: EtcdTxnRequest;
}

/** A transaction: if every comparison holds, `success` runs, else `failure`; atomically, at one revision. */
export interface EtcdTxnRequest {
  readonly compare: readonly EtcdCompare[];
  readonly success: readonly EtcdRequestOp[];
  readonly failure: readonly EtcdRequestOp[];
}

/** The answer to one operation of a transaction. */
export interface EtcdResponseOp {
  readonly response_range?: { readonly kvs: EtcdKeyValue[]; readonly count?: string; readonly more?: boolean };
  readonly response_put?: { readonly header: EtcdHeader };
  readonly response_delete_range?: { readonly deleted: string; readonly prev_kvs: EtcdKeyValue[] };
  readonly response_txn?: EtcdTxnResponse;
}

/** The answer to a transaction. */
export interface EtcdTxnResponse {
  readonly header: EtcdHeader;
  readonly succeeded: boolean;
  readonly responses: EtcdResponseOp[];
}

/** A bidirectional gRPC stream as etcd3 hands it out. */
export interface EtcdDuplexStream<Request, Response> {
  write(request: Request): void;
  end(): void;
  cancel(): void;
  on(event: 'data', listener: (response: Response) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'end', listener: () => void): this;
}

/** A keep-alive request and its answer: `TTL` 0 means the lease no longer exists. */
export interface EtcdKeepAlive {
  readonly ID: string;
  readonly TTL: string;
}

/** What the watch stream is asked. */
export interface EtcdWatchRequest {
  readonly create_request?: {
    readonly key: Buffer;
    readonly range_end?: Buffer;
    readonly start_revision?: Int64;
    readonly filters?: ReadonlyArray<'Noput' | 'Nodelete'>;
    readonly prev_kv?: boolean;
  };
  readonly cancel_request?: { readonly watch_id: Int64 };
}

/** What the watch stream says: a watch created or cancelled, or events of one. */
export interface EtcdWatchResponse {
  readonly header: EtcdHeader;
  readonly watch_id: string;
  readonly created: boolean;
  readonly canceled: boolean;
  readonly compact_revision: string;
  readonly events: ReadonlyArray<{
    readonly type: 'Put' | 'Delete';
    readonly kv: EtcdKeyValue;
    /** The key as it was before the event, when the watch asked for it. */
    readonly prev_kv?: EtcdKeyValue | null;
  }>;
}

/**
 * The part of an `etcd3` client (`new Etcd3(...)`) this package uses: its raw gRPC services. Its own Lease,
 * Lock and Watcher helpers are not used (see docs/stores.md, "Why `etcd3`").
 */
export interface Etcd3Client {
  readonly kv: {
    txn(request: EtcdTxnRequest, options?: { deadline?: number }): Promise<EtcdTxnResponse>;
  };
  readonly leaseClient: {
    leaseGrant(request: { TTL: Int64 }): Promise<{ ID: string; TTL: string }>;
    leaseRevoke(request: { ID: Int64 }): Promise<unknown>;
    leaseTimeToLive(request: { ID: Int64 }): Promise<{ TTL: string; grantedTTL: string }>;
    leaseKeepAlive(): Promise<EtcdDuplexStream<{ ID: Int64 }, EtcdKeepAlive>>;
  };
  readonly watchClient: {
    watch(): Promise<EtcdDuplexStream<EtcdWatchRequest, EtcdWatchResponse>>;
  };
  readonly maintenance: {
    status(): Promise<{ header: EtcdHeader; leader: string; version: string }>;
  };
  close(): void;
}

/** How the store connects when it makes its own clients. */
export interface EtcdConnectionOptions {
  readonly hosts: readonly string[];
  readonly auth?: { readonly username: string; readonly password: string };
  readonly credentials?: {
    readonly rootCertificate: Buffer;
    readonly privateKey?: Buffer;
    readonly certChain?: Buffer;
  };
  /** Deadline of each call, in ms. */
  readonly timeout: number;
}

interface Etcd3Module {
  Etcd3: new (options: object) => Etcd3Client;
}

/** A fault policy of etcd3 that runs the call once: failing over is the store's own work (see EtcdMembers). */
const ONCE = {
  // async: etcd3 hands it calls that throw at once, and expects a rejected promise back, never a throw
  execute: async <T>(call: () => Promise<T> | T): Promise<T> => call(),
};

/**
 * Loads the optional `etcd3` package and creates one client per member, each with no retry or circuit
 * breaker of its own: the store decides which member to use and when to move on. Each unary call gets its
 * own deadline; gRPC keep-alive pings (while a stream or call is open, at a rate etcd accepts) find a dead
 * connection that no call is using.
 * @throws LockConfigurationError when `etcd3` is not installed
 */
export async function createEtcdClients(options: EtcdConnectionOptions): Promise<Etcd3Client[]> {
  let module: Etcd3Module;
  try {
    module = (await import('etcd3')) as unknown as Etcd3Module;
  } catch (error) {
    throw new LockConfigurationError(
      'etcd',
      options.hosts,
      `the etcd store needs the "etcd3" package, which could not be loaded (${(error as Error).message}); ` +
        'install it: npm install etcd3',
    );
  }
  const Etcd3 = module.Etcd3 ?? (module as unknown as { default: Etcd3Module }).default.Etcd3;
  return options.hosts.map(
    (host) =>
      new Etcd3({
        hosts: host,
        ...(options.auth ? { auth: { username: options.auth.username, password: options.auth.password } } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
        defaultCallOptions: (context: { isStream: boolean }) =>
          context.isStream ? {} : { deadline: Date.now() + options.timeout },
        faultHandling: { global: ONCE, host: () => ONCE },
        grpcOptions: {
          'grpc.keepalive_time_ms': 10_000,
          'grpc.keepalive_timeout_ms': Math.max(1000, options.timeout),
        },
      }),
  );
}
