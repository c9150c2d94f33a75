import { EventEmitter } from 'node:events';
import type {
  ClientListener,
  CommandArgument,
  RedisClientPort,
  RedisClientSettings,
  RedisPipelinePort,
} from './redis-client-port.js';
import {
  createGlideSubscriber,
  isGlideCluster,
  STRING_DECODER,
  type GlideClient,
  type GlideCommandOptions,
} from './glide-client.js';
import { fromGlideError } from './glide-error.js';
import { readClusterSlots, UNKNOWN_TOPOLOGY, type ClusterTopology, type NodeAddress } from './glide-topology.js';
import { NodeRedisPipeline, type QueuedCommand } from './node-redis-pipeline.js';

/** How long a subscription may take to be confirmed before the waiter falls back to its backoff, in ms. */
const SUBSCRIBE_TIMEOUT = 5000;

/**
 * A Valkey GLIDE 2.x `GlideClient` or `GlideClusterClient` as the store's port. Commands go as strings by
 * `customCommand` (decoded as strings, whatever the client's `defaultDecoder`), routed on a cluster by the key
 * they name; GLIDE multiplexes one connection per node, so commands sent together are pipelined by its core,
 * which is what a pipeline here is. Its errors are put in the words of a server's error reply (glide-error.ts).
 *
 * GLIDE has no dynamic message listener: a client hands messages only to the callback it was made with. So
 * the port's `duplicate()` (the store's subscriber) is a second client of the same class and settings, made
 * by the port on its first subscription and closed by it; the user's client is never subscribed, never
 * closed. GLIDE emits no connection events: it re-subscribes by itself after a reconnect, and a notice lost
 * meanwhile is made up for by the waiter's backoff.
 */
export class GlidePort implements RedisClientPort {
  readonly isCluster: boolean;
  readonly options: RedisClientSettings;
  /** Messages of the channels this port subscribed (`message`, or `smessage` on a cluster). */
  private readonly messages = new EventEmitter();
  /** The client commands go to: the user's, or once made, the subscriber's. */
  private client?: GlideClient;
  private connecting?: Promise<GlideClient>;
  private topology: ClusterTopology = UNKNOWN_TOPOLOGY;
  private refreshing?: Promise<void>;
  private ended = false;

  /**
   * @param source the user's GLIDE client
   * @param owned whether the port made the client it sends to (and may close it)
   * @param subscriber whether this port is a subscriber: its own client, made from `source`'s settings
   */
  constructor(
    private readonly source: GlideClient,
    private readonly owned = false,
    private readonly subscriber = false,
  ) {
    this.isCluster = isGlideCluster(source);
    if (!subscriber) this.client = source;
    const commandTimeout = source.config?.requestTimeout ?? source.requestTimeout;
    const [address] = source.config?.addresses ?? [];
    this.options = this.isCluster
      ? { redisOptions: { commandTimeout } }
      : { host: address?.host, port: address?.port, commandTimeout };
  }

  get status(): string {
    if (this.ended || this.client?.isClosed === true) return 'end';
    return this.client ? 'ready' : 'connecting';
  }

  /** For a cluster: each slot's master as `host:port`, once the port has asked the cluster. */
  get slots(): ReadonlyArray<readonly string[] | undefined> {
    if (this.topology === UNKNOWN_TOPOLOGY) this.refreshTopology().catch(() => undefined);
    return this.topology.slots;
  }

  /** For a cluster: a port on each master, as last learnt (asked again in the background for the next call). */
  nodes(): RedisClientPort[] {
    this.refreshTopology().catch(() => undefined);
    return this.topology.masters.map((master) => new GlideNodePort(this.source, master));
  }

  send(command: QueuedCommand, route?: GlideCommandOptions['route']): Promise<unknown> {
    const args = [command.name, ...command.args.map(String)];
    const options: GlideCommandOptions = {
      decoder: STRING_DECODER,
      ...(route ? { route } : this.isCluster && command.key !== undefined ? { route: slotOf(command.key) } : {}),
    };
    const reply = this.client
      ? this.client.customCommand(args, options)
      : this.connect().then((client) => client.customCommand(args, options));
    return reply.catch((error: unknown) => {
      throw fromGlideError(error);
    });
  }

  evalsha(sha: string, numKeys: number, ...keysAndArgs: CommandArgument[]): Promise<unknown> {
    return this.send(scriptCommand('EVALSHA', sha, numKeys, keysAndArgs));
  }

  eval(lua: string, numKeys: number, ...keysAndArgs: CommandArgument[]): Promise<unknown> {
    return this.send(scriptCommand('EVAL', lua, numKeys, keysAndArgs));
  }

  set(key: string, value: CommandArgument, ...options: CommandArgument[]): Promise<string | null> {
    return this.send({ name: 'SET', args: [key, value, ...options], key }) as Promise<string | null>;
  }

  get(key: string): Promise<string | null> {
    return this.send({ name: 'GET', args: [key], key }) as Promise<string | null>;
  }

  mget(...keys: string[]): Promise<Array<string | null>> {
    return this.send({ name: 'MGET', args: keys, key: keys[0] }) as Promise<Array<string | null>>;
  }

  async del(key: string): Promise<number> {
    return Number(await this.send({ name: 'DEL', args: [key], key }));
  }

  async llen(key: string): Promise<number> {
    return Number(await this.send({ name: 'LLEN', args: [key], key }));
  }

  async hexists(key: string, field: string): Promise<number> {
    // RESP3 answers with a boolean
    return Number(await this.send({ name: 'HEXISTS', args: [key, field], key }));
  }

  async scan(cursor: string, ...options: CommandArgument[]): Promise<[string, string[]]> {
    const reply = (await this.send({ name: 'SCAN', args: [cursor, ...options] })) as [unknown, unknown[]];
    return [String(reply[0]), reply[1].map(String)];
  }

  script(subcommand: string, ...args: string[]): Promise<unknown> {
    return this.send({ name: 'SCRIPT', args: [subcommand, ...args] });
  }

  async config(subcommand: string, pattern: string): Promise<unknown> {
    return flatPairs(await this.send({ name: 'CONFIG', args: [subcommand, pattern] }));
  }

  async info(section: string): Promise<string> {
    return String(await this.send({ name: 'INFO', args: [section] }));
  }

  async ping(): Promise<unknown> {
    const [reply] = await Promise.all([
      this.send({ name: 'PING', args: [] }),
      this.isCluster && this.refreshTopology(),
    ]);
    return reply;
  }

  pipeline(): RedisPipelinePort {
    return new NodeRedisPipeline((command) => this.send(command));
  }

  subscribe(channel: string): Promise<unknown> {
    return this.subscribeWith('subscribe', 'unsubscribeLazy', channel);
  }

  unsubscribe(channel: string): Promise<unknown> {
    return this.unsubscribeWith('unsubscribe', channel);
  }

  ssubscribe(channel: string): Promise<unknown> {
    return this.subscribeWith('ssubscribe', 'sunsubscribeLazy', channel);
  }

  sunsubscribe(channel: string): Promise<unknown> {
    return this.unsubscribeWith('sunsubscribe', channel);
  }

  on(event: string, listener: ClientListener): this {
    this.messages.on(event, listener as (...args: unknown[]) => void);
    return this;
  }

  off(event: string, listener: ClientListener): this {
    this.messages.off(event, listener as (...args: unknown[]) => void);
    return this;
  }

  /** The store's subscriber: a client of the port's own with the user's client's settings, closed by the port. */
  duplicate(): RedisClientPort {
    return new GlidePort(this.source, true, true);
  }

  async quit(): Promise<void> {
    this.disconnect();
  }

  disconnect(): void {
    if (!this.owned || this.ended) return;
    this.ended = true;
    if (this.client) this.client.close();
    else this.connecting?.then((client) => client.close()).catch(() => undefined);
  }

  /** The subscriber's own client, made at its first use (again after a failed attempt). */
  private connect(): Promise<GlideClient> {
    if (this.client) return Promise.resolve(this.client);
    if (this.ended) return Promise.reject(new Error('Connection is closed (the store closed its subscriber)'));
    this.connecting ??= createGlideSubscriber(this.source, (channel, message) =>
      this.messages.emit(this.isCluster ? 'smessage' : 'message', channel, message),
    ).then(
      (client) => {
        if (this.ended) client.close();
        else this.client = client;
        return client;
      },
      (error: unknown) => {
        this.connecting = undefined;
        throw fromGlideError(error);
      },
    );
    return this.connecting;
  }

  private async subscribeWith(
    method: 'subscribe' | 'ssubscribe',
    forget: 'unsubscribeLazy' | 'sunsubscribeLazy',
    channel: string,
  ): Promise<void> {
    const client = await this.connect();
    try {
      await client[method]?.(new Set([channel]), SUBSCRIBE_TIMEOUT);
    } catch (error) {
      // GLIDE keeps a subscription it could not confirm as wanted, and would make it later: drop it
      client[forget]?.(new Set([channel])).catch(() => undefined);
      throw fromGlideError(error);
    }
  }

  private async unsubscribeWith(method: 'unsubscribe' | 'sunsubscribe', channel: string): Promise<void> {
    const client = this.client;
    if (!client || client.isClosed) return;
    try {
      await client[method]?.(new Set([channel]), SUBSCRIBE_TIMEOUT);
    } catch (error) {
      throw fromGlideError(error);
    }
  }

  /** Asks the cluster which master serves which slot (one request at a time). */
  private refreshTopology(): Promise<void> {
    if (!this.isCluster) return Promise.resolve();
    this.refreshing ??= this.send({ name: 'CLUSTER', args: ['SLOTS'] }, 'randomNode')
      .then((reply) => {
        const topology = readClusterSlots(reply);
        if (topology.masters.length > 0) this.topology = topology;
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }
}

/**
 * One master of a GLIDE cluster as a port of its own, for the checks and the listing that ask every master:
 * its commands are routed to that node's address. Its connection belongs to the cluster client.
 */
class GlideNodePort extends GlidePort {
  override readonly isCluster = false;
  override readonly options: RedisClientSettings;

  constructor(
    cluster: GlideClient,
    private readonly master: NodeAddress,
  ) {
    super(cluster);
    this.options = { ...master, commandTimeout: cluster.config?.requestTimeout ?? cluster.requestTimeout };
  }

  override send(command: QueuedCommand): Promise<unknown> {
    return super.send(command, { type: 'routeByAddress', host: this.master.host, port: this.master.port });
  }
}

function slotOf(key: string): GlideCommandOptions['route'] {
  return { type: 'primarySlotKey', key };
}

function scriptCommand(name: string, script: string, numKeys: number, keysAndArgs: CommandArgument[]): QueuedCommand {
  const key = numKeys > 0 ? String(keysAndArgs[0]) : undefined;
  return { name, args: [script, numKeys, ...keysAndArgs], ...(key === undefined ? {} : { key }) };
}

/**
 * CONFIG GET's answer as ioredis gives it: a flat list of names and values. GLIDE hands a RESP3 map over as a
 * list of `{ key, value }` entries, and RESP2's flat list as it is.
 */
function flatPairs(reply: unknown): unknown {
  if (!Array.isArray(reply)) return reply;
  return reply.flatMap((entry: unknown) =>
    typeof entry === 'object' && entry !== null && 'key' in entry && 'value' in entry
      ? [(entry as { key: unknown }).key, (entry as { value: unknown }).value]
      : [entry],
  );
}
