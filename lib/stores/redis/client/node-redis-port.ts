import type { ClientListener, RedisClientPort, RedisClientSettings } from './redis-client-port.js';
import { CommandPort } from './command-port.js';
import type { QueuedCommand } from './command-pipeline.js';
import { isNetworkError } from '../../../utils/failure-kind.js';
import { setTimeoutAfterReads } from '../../../utils/timeout-after-reads.js';

/** The part of a node-redis 5 or 6 client (`createClient()`) or cluster (`createCluster()`) the port uses. */
interface NodeRedisClient {
  readonly isOpen: boolean;
  readonly isReady?: boolean;
  readonly options?: {
    readonly url?: string;
    readonly socket?: { readonly host?: string; readonly port?: number; readonly path?: string };
  };
  /** A cluster's view of its shards by slot (node-redis 5 and 6). */
  readonly slots?: ReadonlyArray<{ readonly master?: { readonly host: string; readonly port: number } } | undefined>;
  readonly masters?: ReadonlyArray<{
    readonly host: string;
    readonly port: number;
    /** The master's sharded pub/sub connection, once something subscribed on its slots. */
    readonly pubSub?: { readonly client: ConnectionEvents };
  }>;
  nodeClient?(node: unknown): NodeRedisClient | Promise<NodeRedisClient>;
  /** A cluster's own instance, behind the object `createCluster()` returns (node-redis 6). */
  readonly _self?: ClusterResubscriptions;
  sendCommand(...args: unknown[]): Promise<unknown>;
  connect(): Promise<unknown>;
  once(event: string, listener: () => void): unknown;
  duplicate(): NodeRedisClient;
  SUBSCRIBE(channel: string, listener: (message: string, channel: string) => void): Promise<void>;
  UNSUBSCRIBE(channel: string): Promise<void>;
  SSUBSCRIBE(channel: string, listener: (message: string, channel: string) => void): Promise<void>;
  SUNSUBSCRIBE(channel: string): Promise<void>;
  on(event: string, listener: ClientListener): unknown;
  off(event: string, listener: ClientListener): unknown;
  close(): Promise<void>;
  destroy(): void;
}

/**
 * How a node-redis 6 cluster moves a gone master's channels to the connection of the master that serves them
 * now (a failover, a node leaving): it calls this method of its own instance, and the promise settles once
 * they are subscribed there. node-redis 5 binds it when the cluster is made and drops the promise.
 */
interface ClusterResubscriptions {
  resubscribeAllPubSubListeners?(listeners: unknown): unknown;
}

/** One node-redis connection of a cluster's: its state and events. */
interface ConnectionEvents {
  readonly isReady?: boolean;
  /** Whether it is subscribed to anything (node-redis closes a shard connection whose last channel went). */
  readonly isPubSubActive?: boolean;
  on(event: string, listener: () => void): unknown;
  once(event: string, listener: () => void): unknown;
}

/**
 * How long a command may wait for its answer, in ms. node-redis has no such bound of its own (5's `timeout`
 * stops only a command not yet sent), and on a frozen server a command would wait for ever: this is ioredis'
 * `commandTimeout` of the clients the module creates.
 */
export const NODE_REDIS_COMMAND_TIMEOUT = 2000;

/**
 * Our events and the node-redis events that carry them (`close`: the connection went, for now or for good). A
 * client made with `reconnectStrategy: false` gives up at its first drop and says neither `reconnecting` nor
 * `end`: 6 says `terminated` and `error`, 5 only `error`. node-redis emits `error` for its connection alone (a
 * command's error reply rejects that command), so an `error` also says the connection is not to be counted on.
 */
const FORWARDED_EVENTS: Readonly<Record<string, readonly string[]>> = {
  error: ['error'],
  ready: ['ready'],
  close: ['end', 'reconnecting', 'terminated', 'error'],
};

/**
 * A node-redis 5 or 6 client as the store's port, RESP2 or RESP3 (6's default). A client that is not open
 * is connected here and still never closed by us; the port closes only the connections it made itself (the
 * subscriber's, by `duplicate()`). Commands go by `sendCommand`, which node-redis writes in one batch when
 * sent in one tick, so a pipeline is those commands sent together.
 */
export class NodeRedisPort extends CommandPort implements RedisClientPort {
  readonly isCluster: boolean;
  readonly options: RedisClientSettings;
  /** A cluster's discovery of its slots, while it runs: commands wait for it (node-redis does not queue them). */
  private opening?: Promise<void>;
  /**
   * The one listener of every channel: node-redis keeps a channel's listeners in a set, so subscribing a
   * channel again (the subscriber confirming its channels after a reconnect) does not hear each message twice.
   */
  private readonly forwardMessage = (message: string, from: string): void => {
    this.messages.emit('message', from, message);
  };
  private readonly forwardShardMessage = (message: string, from: string): void => {
    this.messages.emit('smessage', from, message);
  };
  /** A cluster's sharded pub/sub connections whose drops and returns this port reports (`close`, `ready`). */
  private readonly watchedShardConnections = new WeakSet<object>();
  private shardConnectionsReady = false;
  /** Our SUNSUBSCRIBEs on a cluster not answered yet. */
  private unsubscribing = 0;

  /**
   * @param client the node-redis client or cluster
   * @param owned whether the port made it (and may close it)
   */
  constructor(
    private readonly client: NodeRedisClient,
    private readonly owned = false,
  ) {
    super();
    this.isCluster = typeof client.nodeClient === 'function' && client.masters !== undefined;
    if (this.isCluster && owned) this.followResubscriptions();
    const commandTimeout = NODE_REDIS_COMMAND_TIMEOUT;
    this.options = this.isCluster ? { redisOptions: { commandTimeout } } : { ...settingsOf(client), commandTimeout };
  }

  get status(): string {
    if (this.client.isReady ?? this.client.isOpen) return 'ready';
    return this.client.isOpen ? 'connecting' : 'end';
  }

  /** For a cluster: each slot's master as `host:port`. */
  get slots(): Array<string[] | undefined> {
    return (this.client.slots ?? []).map((shard) => (shard?.master ? [addressOf(shard.master)] : undefined));
  }

  nodes(): RedisClientPort[] {
    return (this.client.masters ?? []).map((master) => new NodeRedisNodePort(this.client, master));
  }

  /**
   * Sends `command`, failing it with "Command timed out" when no answer comes within
   * NODE_REDIS_COMMAND_TIMEOUT (its answer, if it comes later, is nobody's). A command whose connection
   * closed under it is sent once more, on the next connection, as ioredis does: every script of the store
   * may run twice (each checks its token), and node-redis itself only fails it.
   */
  override send(command: QueuedCommand): Promise<unknown> {
    return withTimeout(this.dispatch(command), command.name, () => this.dispatch(command));
  }

  /** Hands `command` to the client: a single client queues it while it connects, a cluster after discovery. */
  protected dispatch(command: QueuedCommand): Promise<unknown> {
    const args = [command.name, ...command.args.map(String)];
    if (!this.isCluster) {
      this.ensureOpen();
      return this.client.sendCommand(args);
    }
    // a cluster routes by a key (a keyless command goes to any node); a read-only flag of false is always safe
    if (this.knowsSlots()) return this.client.sendCommand(command.key, false, args);
    return this.clusterReady().then(() => this.client.sendCommand(command.key, false, args));
  }

  subscribe(channel: string): Promise<unknown> {
    this.ensureOpen();
    return withTimeout(this.client.SUBSCRIBE(channel, this.forwardMessage), 'SUBSCRIBE');
  }

  unsubscribe(channel: string): Promise<unknown> {
    return this.client.UNSUBSCRIBE(channel);
  }

  ssubscribe(channel: string): Promise<unknown> {
    const subscribing = this.isCluster
      ? this.clusterReady()
          .then(() => this.client.SSUBSCRIBE(channel, this.forwardShardMessage))
          .then(() => this.watchShardConnections())
      : (this.ensureOpen(), this.client.SSUBSCRIBE(channel, this.forwardShardMessage));
    return withTimeout(subscribing, 'SSUBSCRIBE');
  }

  sunsubscribe(channel: string): Promise<unknown> {
    if (!this.isCluster) return this.client.SUNSUBSCRIBE(channel);
    this.unsubscribing++;
    return this.client.SUNSUBSCRIBE(channel).finally(() => this.unsubscribing--);
  }

  override on(event: string, listener: ClientListener): this {
    const forwarded = this.forwardedEvents(event);
    if (!forwarded) return super.on(event, listener);
    for (const name of forwarded) this.client.on(name, listener);
    return this;
  }

  override off(event: string, listener: ClientListener): this {
    const forwarded = this.forwardedEvents(event);
    if (!forwarded) return super.off(event, listener);
    for (const name of forwarded) this.client.off(name, listener);
    return this;
  }

  /**
   * The node-redis events that carry one of ours. A cluster emits neither `ready` nor `close` (its nodes'
   * connections say `node-ready` and `node-reconnecting`, which do not tell pub/sub connections from the others):
   * this port emits those itself, for the sharded pub/sub connections (see watchShardConnections).
   */
  private forwardedEvents(event: string): readonly string[] | undefined {
    if (this.isCluster && (event === 'ready' || event === 'close')) return undefined;
    return FORWARDED_EVENTS[event];
  }

  /**
   * Reports the drops and returns of a cluster's sharded pub/sub connections, as a single client's `close`
   * and `ready`: notices sent while one is down are lost, and node-redis re-subscribes its channels before it
   * says `ready` again. Called after each SSUBSCRIBE answer, when the connection of that channel's master
   * exists; the first call says `ready` once, as a client does when it first connects.
   */
  private watchShardConnections(): void {
    for (const master of this.client.masters ?? []) {
      const connection = master.pubSub?.client;
      if (!connection || this.watchedShardConnections.has(connection)) continue;
      this.watchedShardConnections.add(connection);
      this.reportShardConnection(connection);
    }
    if (this.shardConnectionsReady) return;
    this.shardConnectionsReady = true;
    this.messages.emit('ready');
  }

  /**
   * Says `close` when a sharded pub/sub connection drops or gives up (as a single client's does, see
   * FORWARDED_EVENTS) or its channels move to another master's connection (a slot migration, which node-redis
   * follows on a connection of its own, not watched until the store's next subscription on it); and `ready`
   * when it comes back.
   */
  private reportShardConnection(connection: ConnectionEvents): void {
    const lost = (): void => void this.messages.emit('close');
    for (const event of ['reconnecting', 'terminated', 'error', 'sharded-channel-moved']) connection.on(event, lost);
    // node-redis closes a connection whose last channel our SUNSUBSCRIBE took: no channel of ours went with it
    connection.once('end', () => {
      if (this.unsubscribing === 0 || connection.isPubSubActive !== false) lost();
    });
    // one found while it still connects (a SUBSCRIBE to another master under way) says `ready` for its first time
    let connected = connection.isReady === true;
    connection.on('ready', () => {
      if (connected) this.messages.emit('ready');
      connected = true;
    });
  }

  /**
   * Says `ready` once node-redis 6 has subscribed a gone master's channels on their new master's connection,
   * and watches that connection: the `close` of the old one took their cover, and notices sent in between were
   * lost, so every waiter asks again. Without it those waiters would ask only at their backoff, for as long as
   * their keys stay busy. Only on a cluster the port made (its subscriber), never on a user's.
   */
  private followResubscriptions(): void {
    const cluster = this.client._self ?? (this.client as ClusterResubscriptions);
    if (typeof cluster.resubscribeAllPubSubListeners !== 'function') return;
    const resubscribe = cluster.resubscribeAllPubSubListeners.bind(cluster);
    cluster.resubscribeAllPubSubListeners = (listeners): unknown => {
      const subscribed: unknown = resubscribe(listeners);
      // node-redis 5 answers nothing (and calls its own bound copy): there is no moment to say `ready` at
      if (!(subscribed instanceof Promise)) return subscribed;
      return subscribed.then((answers: unknown) => {
        this.watchShardConnections();
        this.messages.emit('ready');
        return answers;
      });
    };
  }

  /** A connection of the port's own with the client's settings (a cluster's: its nodes), closed by the port. */
  duplicate(): RedisClientPort {
    const copy = this.client.duplicate();
    // errors surface through the commands that fail; an unhandled 'error' event would crash the process
    copy.on('error', () => undefined);
    return new NodeRedisPort(copy, true);
  }

  /**
   * Connects a client that is not open, at its first command (node-redis refuses commands before
   * `connect()`, and queues them after it until ready); its failures reach us through our commands.
   */
  private ensureOpen(): void {
    if (!this.client.isOpen) this.client.connect().catch(() => undefined);
  }

  /** Whether a cluster has learnt its slots: 6 says `isReady`; 5 has its masters once discovery is done. */
  private knowsSlots(): boolean {
    return this.client.isReady ?? (this.client.isOpen && (this.client.masters?.length ?? 0) > 0);
  }

  /**
   * Resolves once a cluster knows its slots: connects one that is not open, else waits for the discovery that
   * someone else started (node-redis fails a command sent before it, instead of queueing it).
   */
  private clusterReady(): Promise<void> {
    if (this.knowsSlots()) return Promise.resolve();
    this.opening ??= (
      this.client.isOpen
        ? new Promise<void>((resolve) => this.client.once('connect', resolve))
        : this.client.connect().then(() => undefined)
    ).finally(() => (this.opening = undefined));
    return this.opening;
  }

  async quit(): Promise<void> {
    if (this.owned && this.client.isOpen) await this.client.close();
  }

  disconnect(): void {
    if (this.owned && this.client.isOpen) this.client.destroy();
  }
}

/**
 * One master of a node-redis cluster as a port of its own, for the checks that ask every master (scripts,
 * eviction policy). It only sends commands; its connection belongs to the cluster.
 */
class NodeRedisNodePort extends NodeRedisPort {
  constructor(
    private readonly cluster: NodeRedisClient,
    private readonly master: { readonly host: string; readonly port: number },
  ) {
    super(cluster);
    this.options = { host: master.host, port: master.port, commandTimeout: NODE_REDIS_COMMAND_TIMEOUT };
  }

  override readonly isCluster = false;
  override readonly options: RedisClientSettings;

  protected override async dispatch(command: QueuedCommand): Promise<unknown> {
    const node = await this.cluster.nodeClient?.(this.master);
    if (!node) throw new Error(`no connection to master ${addressOf(this.master)}`);
    return node.sendCommand([command.name, ...command.args.map(String)]);
  }
}

/**
 * `sent`, or a "Command timed out" error (the words ioredis uses) once it has waited the command timeout;
 * with `resend`, a command cut with its connection is sent again, within the same timeout.
 */
function withTimeout<T>(sent: Promise<T>, name: string, resend?: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancelTimeout = setTimeoutAfterReads(
      () => reject(new Error(`Command timed out: no answer to ${name} within ${NODE_REDIS_COMMAND_TIMEOUT} ms`)),
      NODE_REDIS_COMMAND_TIMEOUT,
    );
    const answered = (reply: T): void => {
      cancelTimeout();
      resolve(reply);
    };
    const failed = (error: unknown): void => {
      cancelTimeout();
      reject(error);
    };
    sent.then(answered, (error: unknown) => {
      if (resend && cutWithConnection(error)) resend().then(answered, failed);
      else failed(error);
    });
  });
}

/** Whether a command failed because its connection closed while it waited for its answer. */
function cutWithConnection(error: unknown): boolean {
  // node-redis' SocketClosedUnexpectedlyError, or the socket's own error (ECONNRESET)
  return (error as { message?: unknown } | null)?.message === 'Socket closed unexpectedly' || isNetworkError(error);
}

function settingsOf(client: NodeRedisClient): RedisClientSettings {
  const socket = client.options?.socket;
  if (socket?.path) return { path: socket.path };
  if (socket?.host !== undefined || socket?.port !== undefined) return { host: socket.host, port: socket.port };
  const url = client.options?.url;
  if (!url) return {};
  try {
    // the host and port only: never the credentials a URL may carry
    const parsed = new URL(url);
    return { host: parsed.hostname, port: Number(parsed.port || 6379) };
  } catch {
    return {};
  }
}

function addressOf(node: { readonly host: string; readonly port: number }): string {
  return `${node.host}:${node.port}`;
}
