import type { Redis, RedisOptions } from 'ioredis';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { labelOfOptions } from './node-label.js';

/**
 * One Redis node of a Redlock quorum: an ioredis client you own and close yourself, or a `redis://` /
 * `rediss://` URL or ioredis options the store connects with, owns and closes.
 */
export type RedlockNode = Redis | string | RedisOptions;

/** A node checked and connected: its client, a label for messages, and whether the store must close it. */
export interface ConnectedNode {
  readonly client: Redis;
  readonly label: string;
  readonly owned: boolean;
}

/** A node that passed the checks, not yet connected. */
export type CheckedNode =
  | { readonly kind: 'client'; readonly client: Redis; readonly label: string }
  | { readonly kind: 'url'; readonly url: string; readonly label: string }
  | { readonly kind: 'options'; readonly options: RedisOptions; readonly label: string };

/**
 * Defaults of a connection the store opens itself: a command queued while its node is down is failed
 * after one reconnect attempt instead of twenty, so an outage does not pile commands up for minutes
 * (the store stops waiting after its per-node timeout anyway).
 */
const OWNED_DEFAULTS: RedisOptions = { maxRetriesPerRequest: 1 };

/**
 * Checks the `nodes` option without connecting: an odd number of at least 3 distinct nodes, each a
 * standalone ioredis client, a Redis URL or an options object.
 * @throws LockConfigurationError naming what is wrong and why
 */
export function checkNodes(nodes: unknown): CheckedNode[] {
  if (!Array.isArray(nodes)) {
    throw new LockConfigurationError(
      'nodes',
      nodes,
      'expected an array of 3, 5 or more (an odd number) independent Redis nodes: ioredis clients, redis:// URLs or ioredis options',
    );
  }
  checkCount(nodes);
  const checked = nodes.map((node, index) => checkNode(node, index));
  const seen = new Map<string, number>();
  checked.forEach((node, index) => {
    const first = seen.get(node.label);
    if (first !== undefined) {
      throw new LockConfigurationError(
        `nodes[${index}]`,
        node.label,
        `expected a node distinct from nodes[${first}], which is the same server; two votes from one server ` +
          'would let a single failure decide the quorum',
      );
    }
    seen.set(node.label, index);
  });
  return checked;
}

/**
 * Opens the connections of checked nodes; clients passed in are used as they are and never closed.
 * ioredis is loaded only here, and only when there is a URL or options to connect with, so importing this
 * package never requires it.
 */
export async function connectNodes(nodes: readonly CheckedNode[]): Promise<ConnectedNode[]> {
  const given = (node: CheckedNode & { kind: 'client' }): ConnectedNode => ({
    client: node.client,
    label: node.label,
    owned: false,
  });
  if (nodes.every((node) => node.kind === 'client')) return nodes.map(given);
  const { Redis: Client } = await import('ioredis');
  return nodes.map((node) => {
    if (node.kind === 'client') return given(node);
    const client =
      node.kind === 'url' ? new Client(node.url, OWNED_DEFAULTS) : new Client({ ...OWNED_DEFAULTS, ...node.options });
    // else ioredis prints every failed reconnect to a dead node; failures reach us through our commands
    client.on('error', () => undefined);
    return { client, label: node.label, owned: true };
  });
}

function checkCount(nodes: readonly unknown[]): void {
  const count = nodes.length;
  const quorum = Math.floor(count / 2) + 1;
  let why: string | undefined;
  if (count === 0) why = 'there is nothing to hold a lock';
  else if (count === 1) {
    why =
      'a quorum of 1 node is that node alone, so this is a single Redis with extra steps: ' +
      'use RedisLockStore for one server, or give at least 3 independent nodes';
  } else if (count === 2) {
    why =
      'a quorum of 2 nodes (a majority, N/2+1) is both of them, so losing either one stops all locking: ' +
      'less available than a single node; use 3 nodes, which survive the loss of one';
  } else if (count % 2 === 0) {
    why =
      `a quorum of ${count} nodes (a majority, N/2+1) is ${quorum}, so they survive the loss of ` +
      `${count - quorum}, no more than ${count - 1} nodes do; the extra node adds cost and failure points, ` +
      `not tolerance. Use ${count - 1} or ${count + 1} nodes`;
  }
  if (why !== undefined) {
    throw new LockConfigurationError(
      'nodes',
      nodes,
      `expected an odd number of at least 3 independent Redis nodes, got ${count}: ${why}`,
    );
  }
}

function checkNode(node: unknown, index: number): CheckedNode {
  const option = `nodes[${index}]`;
  if (typeof node === 'string') return { kind: 'url', url: node, label: labelOfUrl(option, node) };
  if (typeof node !== 'object' || node === null) {
    throw new LockConfigurationError(option, node, 'expected an ioredis client, a redis:// URL or ioredis options');
  }
  if ((node as { isCluster?: unknown }).isCluster === true) {
    throw new LockConfigurationError(
      option,
      node,
      'expected a standalone Redis node: Redlock needs independent servers, and a Cluster is one lock space ' +
        '(use RedisLockStore for a Cluster)',
    );
  }
  if (typeof (node as { evalsha?: unknown }).evalsha === 'function') {
    const client = node as Redis;
    if (typeof client.duplicate !== 'function' || typeof client.options !== 'object') {
      throw new LockConfigurationError(option, node, 'expected an ioredis Redis client');
    }
    return { kind: 'client', client, label: labelOfOptions(client.options) };
  }
  return { kind: 'options', options: node as RedisOptions, label: labelOfOptions(node as RedisOptions) };
}

function labelOfUrl(option: string, url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') || !parsed.hostname) {
    throw new LockConfigurationError(option, url, 'expected a URL like "redis://host:6379" or "rediss://host:6380"');
  }
  return `${parsed.hostname}:${parsed.port || '6379'}`;
}
