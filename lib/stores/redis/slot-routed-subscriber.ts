import { EventEmitter } from 'node:events';
import type { ClientListener, RedisClientPort, RedisClusterPort } from './client/redis-client-port.js';
import { keySlot } from '../../utils/key-slot.js';
import { handleResubscriptions } from './client/handled-resubscriptions.js';

/** What a {@link ReleaseSubscriber} asks of its connection: subscriptions, their events, and an end. */
export type SubscriberPort = Pick<
  RedisClientPort,
  'subscribe' | 'unsubscribe' | 'ssubscribe' | 'sunsubscribe' | 'on' | 'disconnect'
> & {
  /** On a Cluster: each slot's node addresses, master first, so that a moved topology can be told. */
  readonly slots?: RedisClusterPort['slots'];
};

/** A master's connection as made here: ioredis' `duplicate(override)` of a `Redis`. */
type NodeConnection = Omit<RedisClientPort, 'duplicate'> & {
  duplicate(override?: Record<string, unknown>): NodeConnection;
};

/** ioredis' default reconnection delay: the Cluster makes its node connections without one. */
const reconnectDelay = (attempt: number): number => Math.min(attempt * 50, 2000);

/**
 * The notice subscriber of a Cluster client that cannot shard its subscribers (iovalkey 0.4, ioredis releases
 * before `shardedSubscribers`): one connection per master, each channel SSUBSCRIBEd on the master of its slot. Such a
 * client sends every SSUBSCRIBE to one node, which answers MOVED for the slots of the others, so notices
 * published by SPUBLISH (the scripts' choice for every process on a Cluster, whatever its client) were lost.
 * When a master's connection drops, the topology is asked again; once the slots moved, the channels follow
 * them and `subscribersReady` is emitted, as ioredis' sharded subscribers do.
 */
export class SlotRoutedSubscriber extends EventEmitter implements SubscriberPort {
  private readonly connections = new Map<string, NodeConnection>();
  /** The master each subscribed channel was SSUBSCRIBEd on. */
  private readonly homes = new Map<string, string>();
  private closed = false;

  /** @param topology a Cluster client of its own, closed with this subscriber: it tells where each slot lives */
  constructor(private readonly topology: RedisClusterPort) {
    super();
    // errors surface through the subscriptions that fail; an unhandled 'error' event would crash the process
    topology.on('error', () => undefined);
    topology.on('ready', () => this.emit('ready'));
    topology.on('refresh', () => void this.follow());
  }

  get slots(): RedisClusterPort['slots'] {
    return this.topology.slots;
  }

  /**
   * SSUBSCRIBEs `channel` on the master of its slot; a MOVED answer (the slot moved since the topology was
   * learnt) asks for the topology again and tries once more.
   */
  async ssubscribe(channel: string): Promise<unknown> {
    try {
      return await this.subscribeAtHome(channel);
    } catch (error) {
      if (!String((error as Error | undefined)?.message).startsWith('MOVED')) throw error;
      await this.refresh();
      return this.subscribeAtHome(channel);
    }
  }

  async sunsubscribe(channel: string): Promise<unknown> {
    const home = this.homes.get(channel);
    this.homes.delete(channel);
    return home === undefined ? undefined : this.connections.get(home)?.sunsubscribe(channel);
  }

  /** Not used: on a Cluster the notices are sharded. */
  subscribe(): Promise<unknown> {
    return Promise.reject(new Error('a Cluster subscriber listens by SSUBSCRIBE only'));
  }

  unsubscribe(): Promise<unknown> {
    return Promise.resolve();
  }

  override on(event: string, listener: ClientListener): this {
    return super.on(event, listener as (...args: unknown[]) => void);
  }

  disconnect(): void {
    this.closed = true;
    for (const connection of this.connections.values()) connection.disconnect();
    this.connections.clear();
    this.homes.clear();
    this.topology.disconnect();
  }

  private async subscribeAtHome(channel: string): Promise<unknown> {
    // commands wait in the client's offline queue until it has learnt the slots
    if (this.topology.status !== 'ready') await this.topology.ping();
    const home = this.masterOf(channel);
    if (home === undefined) throw new Error(`no master serves the slot of ${channel}`);
    this.homes.set(channel, home);
    return this.connectionTo(home).ssubscribe(channel);
  }

  private masterOf(channel: string): string | undefined {
    return this.topology.slots[keySlot(channel)]?.[0];
  }

  private connectionTo(home: string): NodeConnection {
    const existing = this.connections.get(home);
    if (existing) return existing;
    const node = this.topology.nodes('master').find((master) => addressOf(master) === home) as unknown as
      NodeConnection | undefined;
    if (!node) throw new Error(`the Cluster client has no connection to master ${home}`);
    // the Cluster's own node connections do not reconnect (it re-routes instead): this one must, to keep its
    // channels, which ioredis SSUBSCRIBEs again on reconnecting
    const connection = handleResubscriptions(
      node.duplicate({ lazyConnect: false, retryStrategy: reconnectDelay, enableOfflineQueue: true }),
    );
    let everReady = false;
    connection.on('error', () => undefined);
    connection.on('smessage', (...message: never[]) => this.emit('smessage', ...message));
    connection.on('close', () => {
      this.emit('close');
      // a master that stays away may have failed over: ask where its slots went
      if (!this.closed) void this.refresh();
    });
    connection.on('ready', () => {
      // the first 'ready' of a connection added for a new channel is no reconnect: nothing was missed
      if (everReady) this.emit('ready');
      everReady = true;
    });
    this.connections.set(home, connection);
    return connection;
  }

  private refresh(): Promise<void> {
    return new Promise((resolve) => {
      (this.topology as RedisClusterPort & { refreshSlotsCache(done: () => void): void }).refreshSlotsCache(() =>
        resolve(),
      );
    });
  }

  /** After the topology was learnt again: channels whose slot moved follow it, connections to old masters end. */
  private async follow(): Promise<void> {
    if (this.closed) return;
    const moving: Array<Promise<unknown>> = [];
    for (const [channel, home] of this.homes) {
      const master = this.masterOf(channel);
      if (master === undefined || master === home) continue;
      this.connections
        .get(home)
        ?.sunsubscribe(channel)
        .catch(() => undefined);
      moving.push(this.subscribeAtHome(channel).catch(() => this.homes.delete(channel)));
    }
    const masters = new Set(this.topology.slots.map((nodes) => nodes?.[0]));
    for (const [home, connection] of this.connections) {
      if (masters.has(home)) continue;
      this.connections.delete(home);
      connection.disconnect();
    }
    if (moving.length === 0) return;
    await Promise.all(moving);
    if (!this.closed) this.emit('subscribersReady');
  }
}

/**
 * Whether `cluster` is an ioredis-family Cluster (it refreshes its own slots cache) without ioredis'
 * `shardedSubscribers` option (its sharded subscriber group): iovalkey 0.4, ioredis releases before that option. The node-redis
 * and GLIDE adapters route SSUBSCRIBE by slot themselves.
 */
export function needsSlotRoutedSubscriber(cluster: RedisClusterPort): boolean {
  const candidate = cluster as RedisClusterPort & {
    refreshSlotsCache?: unknown;
    createShardedSubscriberGroup?: unknown;
  };
  return (
    typeof candidate.refreshSlotsCache === 'function' && typeof candidate.createShardedSubscriberGroup !== 'function'
  );
}

function addressOf(node: RedisClientPort): string {
  return `${node.options.host}:${node.options.port}`;
}
