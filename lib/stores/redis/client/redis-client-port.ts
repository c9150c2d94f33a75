/** A command's argument: the store sends keys, tokens, numbers and Lua text, nothing else. */
export type CommandArgument = string | number;

/** The listener of a client event (`error`, `ready`, `close`, `message`, `smessage`, `subscribersReady`). */
export type ClientListener = (...args: never[]) => void;

/**
 * Commands queued for one round trip. `exec()` answers each with `[error, reply]`, in order; an error of one
 * command does not fail the others.
 */
export interface RedisPipelinePort {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: CommandArgument[]): RedisPipelinePort;
  get(key: string): RedisPipelinePort;
  pttl(key: string): RedisPipelinePort;
  type(key: string): RedisPipelinePort;
  lrem(key: string, count: number, value: string): RedisPipelinePort;
  /** A command by name, for one without a key (WAIT): it goes where the pipeline's keyed commands go. */
  call(command: string, ...args: CommandArgument[]): RedisPipelinePort;
  exec(): Promise<Array<[error: Error | null, reply: unknown]> | null>;
}

/**
 * What the connection settings of a client say, for messages and bounds (never its credentials): ioredis'
 * names, which an adapter fills from its own client's settings.
 */
export interface RedisClientSettings {
  readonly host?: string;
  readonly port?: number;
  readonly path?: string;
  readonly sentinels?: unknown;
  readonly name?: string;
  readonly failoverDetector?: boolean;
  /** ms a command may take before the client gives it up. */
  readonly commandTimeout?: number;
  /** A Cluster's settings for each node. */
  readonly redisOptions?: { readonly commandTimeout?: number };
}

/**
 * The one client port of the Redis store family: the commands, batches, events and per-node access it uses,
 * in ioredis' names and shapes. An ioredis or iovalkey `Redis` or `Cluster` is a port as it is (no layer on
 * the hot path); node-redis and GLIDE clients are wrapped by an adapter (client/*-port.ts). Replies are
 * whatever the client decodes (RESP2 or RESP3): callers coerce them, never compare them to `1`.
 */
export interface RedisClientPort {
  /** Whether every command routes by its keys' hash slot to the master of that slot. */
  readonly isCluster?: boolean;
  /** `ready` once commands can be sent, `end` once closed for good; other values while (re)connecting. */
  readonly status: string;
  readonly options: RedisClientSettings;
  /** For a client that found its master through Sentinel: the socket it is connected on. */
  readonly stream?: { readonly remoteAddress?: string; readonly remotePort?: number };

  evalsha(sha: string, numKeys: number, ...keysAndArgs: CommandArgument[]): Promise<unknown>;
  eval(lua: string, numKeys: number, ...keysAndArgs: CommandArgument[]): Promise<unknown>;
  set(key: string, value: CommandArgument, px: 'PX', ttl: number, nx: 'NX'): Promise<string | null>;
  set(key: string, value: CommandArgument): Promise<string | null>;
  get(key: string): Promise<string | null>;
  mget(...keys: string[]): Promise<Array<string | null>>;
  del(key: string): Promise<number>;
  llen(key: string): Promise<number>;
  hexists(key: string, field: string): Promise<number>;
  /** One SCAN step on this node: the next cursor ('0' at the end) and the names found. */
  scan(cursor: string, match: 'MATCH', pattern: string, count: 'COUNT', hint: number): Promise<[string, string[]]>;
  script(subcommand: 'LOAD' | 'EXISTS', ...args: string[]): Promise<unknown>;
  /** `CONFIG GET pattern`, answered as a flat list of names and values. */
  config(subcommand: 'GET', pattern: string): Promise<unknown>;
  info(section: string): Promise<string>;
  ping(): Promise<unknown>;
  pipeline(): RedisPipelinePort;

  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  ssubscribe(channel: string): Promise<unknown>;
  sunsubscribe(channel: string): Promise<unknown>;

  on(event: string, listener: ClientListener): unknown;
  off(event: string, listener: ClientListener): unknown;

  /**
   * A new connection with the same settings, made and closed by the store (its subscriber); for a Cluster
   * one that subscribes on the master of each channel's slot.
   */
  duplicate(startupNodes?: never[], options?: { readonly shardedSubscribers?: boolean }): RedisClientPort;
  quit(): Promise<unknown>;
  disconnect(): void;
}

/** A port on a Redis Cluster: every command routes by its keys' hash slot to the master of that slot. */
export interface RedisClusterPort extends RedisClientPort {
  readonly isCluster: true;
  /** Each slot's node addresses, master first, once the client has learnt them. */
  readonly slots: ReadonlyArray<readonly string[] | undefined>;
  /** A port on each master, once the client has learnt them. */
  nodes(role: 'master'): RedisClientPort[];
}
