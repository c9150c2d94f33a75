import type { RedisClientPort, RedisClientSettings } from './redis-client-port.js';
import {
  createGlideSubscriber,
  isGlideCluster,
  STRING_DECODER,
  type GlideClient,
  type GlideCommandOptions,
} from './glide-client.js';
import { fromGlideError } from './glide-error.js';
import { readClusterSlots, UNKNOWN_TOPOLOGY, type ClusterTopology, type NodeAddress } from './glide-topology.js';
import { CommandPort } from './command-port.js';
import type { QueuedCommand } from './command-pipeline.js';

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
 * meanwhile is made up for by the waiter's next request (after its backoff, or `retry.maxDelay` for a waiter
 * told of its turn by the line).
 */
export class GlidePort extends CommandPort implements RedisClientPort {
  readonly isCluster: boolean;
  readonly options: RedisClientSettings;
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
    super();
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

  override send(command: QueuedCommand, route?: GlideCommandOptions['route']): Promise<unknown> {
    const args = [command.name, ...command.args.map(String)];
    const options: GlideCommandOptions = {
      decoder: STRING_DECODER,
      ...(route ? { route } : this.isCluster && command.key !== undefined ? { route: slotOf(command.key) } : {}),
    };
    const sendOnce = (): Promise<unknown> =>
      this.client
        ? this.client.customCommand(args, options)
        : this.connect().then((client) => client.customCommand(args, options));
    // GLIDE reconnects by itself but fails what its lost connection left unanswered: sent once more, as ioredis
    // resends it (a release cut with its connection would otherwise leave its lease blocking for its whole ttl)
    return sendOnce()
      .catch((error: unknown) => (cutWithConnection(error) ? sendOnce() : Promise.reject(error)))
      .catch((error: unknown) => {
        throw fromGlideError(error);
      });
  }

  override async ping(): Promise<unknown> {
    const [reply] = await Promise.all([
      this.send({ name: 'PING', args: [] }),
      this.isCluster && this.refreshTopology(),
    ]);
    return reply;
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

/** Whether GLIDE failed a command because its connection was lost (not closed by its owner, not timed out). */
function cutWithConnection(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConnectionError';
}

function slotOf(key: string): GlideCommandOptions['route'] {
  return { type: 'primarySlotKey', key };
}
