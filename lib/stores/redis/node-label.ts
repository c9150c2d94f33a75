import type { RedisClientPort, RedisClientSettings } from './client/redis-client-port.js';

/** How messages name the server that connection options point at: `host:port`, a socket path or a Sentinel group. */
export function labelOfOptions(options: RedisClientSettings): string {
  if (options.path) return options.path;
  if (options.sentinels) return `sentinel:${options.name ?? 'mymaster'}`;
  return `${options.host ?? 'localhost'}:${options.port ?? 6379}`;
}

/**
 * How messages name the server a connected client talks to: its `host:port` (never the credentials of its
 * options); for a client that found its master through Sentinel, also the address it is connected to.
 */
export function labelOfServer(client: RedisClientPort): string {
  const label = labelOfOptions(client.options);
  const socket = client.options.sentinels ? client.stream : undefined;
  return socket?.remoteAddress ? `${label} (${socket.remoteAddress}:${socket.remotePort})` : label;
}
