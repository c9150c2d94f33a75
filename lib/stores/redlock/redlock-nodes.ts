import type { RedisOptions } from '../../interfaces/ioredis-types.js';
import type { RedisClientPort } from '../redis/client/redis-client-port.js';
import { checkClientShape, SUPPORTED_CLIENTS, toClientPort } from '../redis/client/client-port.js';
import { clientShape } from '../redis/client/client-shape.js';
import { isGlideCluster, type GlideClient } from '../redis/client/glide-client.js';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { coalesceWrites } from '../redis/coalesced-writes.js';
import { takeOverCommandTimeout } from '../redis/command-deadlines.js';
import { ConnectionWatch } from '../redis/connection-failure.js';
import { loadIoredis } from '../redis/load-ioredis.js';
import { labelOfOptions } from '../redis/node-label.js';
import { versionIn } from '../redis/server-version.js';
import { redactUrl } from '../../utils/redact.js';

export type { RedlockNode } from '../../interfaces/redlock-store-options.interface.js';

/** A node checked and connected: its client, a label for messages, and whether the store must close it. */
export interface ConnectedNode {
  readonly client: RedisClientPort;
  readonly label: string;
  readonly owned: boolean;
  /**
   * The error behind a command's failure on this node: for a connection the store opened, the last error
   * the connection itself reported (`ECONNREFUSED`, a refused `AUTH`) when the command only says it gave up.
   */
  connectionError(commandError: unknown): unknown;
}

/** A node that passed the checks, not yet connected. */
export type CheckedNode =
  | { readonly kind: 'client'; readonly client: RedisClientPort; readonly label: string }
  | { readonly kind: 'url'; readonly url: string; readonly label: string }
  | { readonly kind: 'options'; readonly options: RedisOptions; readonly label: string };

/**
 * Defaults of a connection the store opens itself: a command queued while its node is down is failed
 * after one reconnect attempt instead of twenty, so an outage does not pile commands up for minutes
 * (the store stops waiting after its per-node timeout anyway); it connects on its first command, so a
 * store that is never used (a bootstrap that failed elsewhere) opens nothing.
 */
const OWNED_DEFAULTS: RedisOptions = { maxRetriesPerRequest: 1, lazyConnect: true };

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
    connectionError: (error) => error,
  });
  if (nodes.every((node) => node.kind === 'client')) return nodes.map(given);
  const { Redis: Client } = await loadIoredis('nodes', nodes.find((node) => node.kind !== 'client')?.label);
  return nodes.map((node) => {
    if (node.kind === 'client') return given(node);
    const client =
      node.kind === 'url' ? new Client(node.url, OWNED_DEFAULTS) : new Client({ ...OWNED_DEFAULTS, ...node.options });
    takeOverCommandTimeout(client);
    coalesceWrites(client);
    // else ioredis prints every failed reconnect to a dead node; failures reach us through our commands,
    // and the last one explains a command that gave up
    const port = toClientPort(client, 'nodes');
    const connection = new ConnectionWatch(port);
    return {
      client: port,
      label: node.label,
      owned: true,
      connectionError: (error) => connection.causeOf(error),
    };
  });
}

/** Which server a node is: its `run_id` (INFO server), or why that could not be read. */
export type ServerIdentity = { readonly runId: string } | { readonly unidentified: string };

/** What one `INFO server` of a node tells the startup check: which server it is, and its Redis version. */
export interface ServerInfo {
  readonly identity: ServerIdentity;
  /** `undefined` when INFO was refused or names no version (see `readServerVersion`). */
  readonly version: string | undefined;
}

/**
 * Reads, with one `INFO server`, the `run_id` a server picked at its start (which no two running servers share)
 * and its Redis version. Never throws.
 */
export async function readServerInfo(client: Pick<RedisClientPort, 'info'>): Promise<ServerInfo> {
  let info: string;
  try {
    info = await client.info('server');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const unidentified = /NOPERM/.test(message) ? 'the Redis user may not run INFO' : `INFO failed: ${message}`;
    return { identity: { unidentified }, version: undefined };
  }
  const runId = /^run_id:(\S+)/m.exec(info)?.[1];
  return { identity: runId ? { runId } : { unidentified: 'its INFO server has no run_id' }, version: versionIn(info) };
}

/**
 * Checks that no server was given as two nodes under different names (`127.0.0.1`, `localhost`, a DNS alias):
 * its one failure would cost the quorum several votes at once. Nodes not identified (no answer, INFO
 * refused) are not compared.
 * @param identities by node index; `undefined` for a node that did not answer
 * @returns a warning naming the nodes that answered but could not be identified, if any
 * @throws LockConfigurationError naming the nodes that are one server
 */
export function checkDistinctServers(
  labels: readonly string[],
  identities: ReadonlyArray<ServerIdentity | undefined>,
): string[] {
  const byServer = new Map<string, number[]>();
  const unidentified: string[] = [];
  identities.forEach((identity, index) => {
    if (identity === undefined) return;
    if ('unidentified' in identity) return void unidentified.push(`${labels[index]} (${identity.unidentified})`);
    byServer.set(identity.runId, [...(byServer.get(identity.runId) ?? []), index]);
  });
  const shared = [...byServer.values()].filter((nodes) => nodes.length > 1);
  if (shared.length > 0) {
    throw new LockConfigurationError(
      'nodes',
      shared.map((nodes) => nodes.map((index) => labels[index]).join(', ')).join('; '),
      `expected independent Redis servers, but ${shared.map((nodes) => `${listed(nodes.map((index) => `nodes[${index}]`))} are one server (the same run_id)`).join(', and ')}: ` +
        'one failure of it would take several votes of the quorum at once. Give each node a server of its own',
    );
  }
  if (unidentified.length === 0) return [];
  return [
    `Could not check that the Redlock nodes are distinct servers: ${unidentified.join(', ')}. One server given ` +
      'under two names counts twice in the quorum; allow the lock user INFO (+info) to have it checked at startup.',
  ];
}

/** `a`, `a and b`, `a, b and c`. */
function listed(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
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
    throw new LockConfigurationError(option, node, 'expected a Redis client, a redis:// URL or ioredis options');
  }
  const shape = clientShape(node);
  const glideCluster = shape === 'glide' && isGlideCluster(node as GlideClient);
  if (
    (node as { isCluster?: unknown }).isCluster === true ||
    (shape === 'node-redis' && 'masters' in node) ||
    glideCluster
  ) {
    throw new LockConfigurationError(
      option,
      node,
      'expected a standalone Redis node: Redlock needs independent servers, and a Cluster is one lock space ' +
        '(use RedisLockStore for a Cluster)',
    );
  }
  if (shape !== 'not a client') {
    checkClientShape(node, option);
    const client = toClientPort(node, option);
    if (typeof client.duplicate !== 'function') {
      throw new LockConfigurationError(option, node, `expected ${SUPPORTED_CLIENTS}`);
    }
    return { kind: 'client', client, label: labelOfOptions(client.options) };
  }
  return { kind: 'options', options: node, label: labelOfOptions(node) };
}

function labelOfUrl(option: string, url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') || !parsed.hostname) {
    throw new LockConfigurationError(
      option,
      redactUrl(url),
      'expected a URL like "redis://host:6379" or "rediss://host:6380"',
    );
  }
  return `${parsed.hostname}:${parsed.port || '6379'}`;
}
