import { unboundedClient } from './bounded-ioredis-port.js';
import type { RedisClientPort } from './redis-client-port.js';

/** The commands ioredis sends again by itself after a reconnect, to restore a subscriber's channels. */
const RESUBSCRIBE_COMMANDS = ['subscribe', 'psubscribe', 'ssubscribe'] as const;

type Subscribing = Record<string, unknown> & { readonly options?: { readonly autoResubscribe?: unknown } };

/**
 * `connection`, its subscriptions restored after a reconnect given a handler. ioredis (5, 6.0) and iovalkey
 * send those SUBSCRIBEs with none: when the connection closes before the server answers (the store closing,
 * a failover cutting it again, its retries running out), the rejection is unhandled, and Node ends the process
 * by default. Our own subscribe calls keep their promise and still see their failures. A connection that does
 * not re-subscribe by itself (node-redis, GLIDE, a Cluster's sharded subscribers) is returned as it is.
 */
export function handleResubscriptions<T extends object>(connection: T): T {
  const client = unboundedClient(connection as unknown as RedisClientPort) as unknown as Subscribing;
  if (client.options?.autoResubscribe !== true) return connection;
  // a duplicate of a Sentinel client has a failover detector of its own
  handleSentinelResubscriptions(client);
  for (const name of RESUBSCRIBE_COMMANDS) {
    const send = client[name];
    if (typeof send !== 'function' || Object.hasOwn(client, name)) continue;
    client[name] = function (this: unknown, ...args: unknown[]): unknown {
      const reply: unknown = send.apply(this, args);
      if (reply instanceof Promise) reply.catch(() => undefined);
      return reply;
    };
  }
  return connection;
}

/**
 * A Sentinel client whose failover detector's connections get the same handler: ioredis (5, 6.0) subscribes
 * each connection to a Sentinel to `+switch-master`, re-subscribes it after a reconnect with no handler, and
 * disconnects it at every failover and when the client closes. ioredis makes those connections in its
 * connector's `connectToSentinel`; a client without one (not a Sentinel client) is left as it is. Applied to
 * the clients the module creates and to every subscriber connection the store makes (`duplicate()` gives a
 * Sentinel client a connector, and a detector, of its own).
 */
export function handleSentinelResubscriptions(client: object): void {
  const connector = (client as { connector?: Record<string, unknown> }).connector;
  const connect = connector?.connectToSentinel;
  if (!connector || typeof connect !== 'function' || Object.hasOwn(connector, 'connectToSentinel')) return;
  connector.connectToSentinel = function (this: unknown, ...args: unknown[]): unknown {
    const connection: unknown = connect.apply(this, args);
    return typeof connection === 'object' && connection !== null ? handleResubscriptions(connection) : connection;
  };
}
