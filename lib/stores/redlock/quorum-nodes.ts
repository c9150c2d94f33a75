import type { RedisClientPort } from '../redis/client/redis-client-port.js';
import { LockStoreError } from '../../errors/lock-store.error.js';
import { describeConnectionFailure } from '../redis/connection-failure.js';
import { withoutArguments } from '../redis/store-error.js';
import { NodeTimeoutError, sendToAll, type NodeReply } from './quorum-round.js';
import { connectNodes, type CheckedNode, type ConnectedNode } from './redlock-nodes.js';

/**
 * The nodes of one Redlock store, asked all at once: every round goes to each node with its own timeout, and
 * a round that fewer than a quorum answered becomes an error naming each failing node and why it failed.
 */
export class QuorumNodes {
  /** How many nodes must agree: a majority, `floor(N / 2) + 1`. */
  readonly quorum: number;
  /** One label per node (`host:port`), for messages. */
  readonly labels: readonly string[];
  /** The nodes once connected: at once for clients passed in, after loading ioredis for URLs and options. */
  readonly connected: Promise<readonly ConnectedNode[]>;
  private nodes?: readonly ConnectedNode[];

  /**
   * @param checked the nodes as the options checked them
   * @param timeout how long to wait for each node, in ms
   */
  constructor(
    checked: readonly CheckedNode[],
    readonly timeout: number,
  ) {
    this.quorum = Math.floor(checked.length / 2) + 1;
    this.labels = checked.map((node) => node.label);
    this.connected = connectNodes(checked).then((nodes) => (this.nodes = nodes));
    // a failure to connect surfaces through every operation that awaits it
    this.connected.catch(() => undefined);
  }

  /** The client of each node, by index: only once `connected` resolved (every round waits for it). */
  clients(): RedisClientPort[] {
    return (this.nodes as ConnectedNode[]).map((node) => node.client);
  }

  /**
   * Sends to every node at once; see {@link sendToAll}.
   * @param timeout how long to wait for each node, in ms: the store's per-node timeout unless said otherwise
   */
  async round<T>(
    send: (client: RedisClientPort, index: number) => Promise<T>,
    decided?: (replies: readonly NodeReply<T>[]) => boolean,
    timeout = this.timeout,
  ): Promise<NodeReply<T>[]> {
    const nodes = this.nodes ?? (await this.connected);
    return sendToAll(nodes.length, (index) => send(nodes[index].client, index), timeout, decided);
  }

  /** The error of a request that fewer than a quorum of nodes answered: an outage, never contention. */
  noQuorum(operation: string, key: string | undefined, replies: readonly NodeReply<unknown>[]): LockStoreError {
    const failed = replies.filter((reply) => reply.state !== 'ok');
    // each node's error without the command's arguments ioredis attaches (the token, the resolved key)
    const errors = failed.map((reply) =>
      reply.state === 'failed' ? withoutArguments(reply.error) : new Error('no reply'),
    );
    const refused = errors.some((error) => (error as { name?: unknown }).name === 'ReplyError');
    const detail =
      `no quorum was reachable: ${failed.length} of ${this.labels.length} Redis nodes ` +
      `${refused ? 'failed or were unreachable' : 'unreachable'}; a quorum of ${this.quorum} is needed ` +
      `(${this.failures(replies)})`;
    return new LockStoreError(operation, key, new AggregateError(errors, detail), detail);
  }

  /** Each failing node with its reason, for messages. */
  failures(replies: readonly NodeReply<unknown>[]): string {
    return replies
      .map((reply, index) =>
        reply.state === 'ok' ? undefined : `${this.labels[index]}: ${this.failureOfNode(reply, index)}`,
      )
      .filter((text) => text !== undefined)
      .join('; ');
  }

  /** Closes the connections the store opened, never clients passed in. */
  async close(): Promise<void> {
    const nodes = await this.connected.catch(() => []);
    const owned = nodes.filter((node) => node.owned).map((node) => node.client);
    // QUIT waits behind commands queued for a node that is down: give it the node timeout, then cut
    const quits = await sendToAll(owned.length, (index) => owned[index].quit(), this.timeout);
    quits.forEach((quit, index) => quit.state !== 'ok' && owned[index].disconnect());
  }

  /**
   * Why node `index` failed: for a command given up while the node reconnects, or timed out meanwhile, the
   * node's own connection error says why (`connection refused (ECONNREFUSED)`, a refused `AUTH`).
   */
  private failureOfNode(reply: NodeReply<unknown>, index: number): string {
    if (reply.state === 'failed') {
      const cause = this.nodes?.[index]?.connectionError(reply.error) ?? reply.error;
      const silent = cause === reply.error && reply.error instanceof NodeTimeoutError;
      const described = silent ? undefined : describeConnectionFailure(cause);
      if (described !== undefined) return described;
    }
    return failureOf(reply);
  }
}

/** Why a node gave no answer in a round. */
export function failureOf(reply: NodeReply<unknown>): string {
  if (reply.state === 'ok') return 'answered';
  if (reply.state === 'pending') return 'no reply yet';
  return reply.error instanceof Error ? reply.error.message : String(reply.error);
}
