import { LockConfigurationError } from '../../../errors/lock-configuration.error.js';
import { boundedIoredisPort } from './bounded-ioredis-port.js';
import { clientShape } from './client-shape.js';
import { hasGlideSettings, type GlideClient } from './glide-client.js';
import { GlidePort } from './glide-port.js';
import { NodeRedisPort } from './node-redis-port.js';
import type { RedisClientPort } from './redis-client-port.js';

/** The clients a Redis store takes, as messages name them. */
export const SUPPORTED_CLIENTS =
  'an ioredis or iovalkey client (Redis or Cluster), a node-redis client or cluster, or a Valkey GLIDE client ' +
  '(GlideClient or GlideClusterClient)';

/**
 * The store's port on a client of yours: an ioredis or iovalkey client as it is (it has the port's shape), or
 * with its commands bounded when it has no `commandTimeout`; a node-redis or GLIDE client behind its adapter.
 * @param option the option the client was given in, for the message
 * @param owned whether the store's creator made the client for it (the store's `ownsClient`): only then may
 *   the port close it
 * @throws LockConfigurationError naming `option` for a client of another shape
 */
export function toClientPort(client: unknown, option: string, owned = false): RedisClientPort {
  // ioredis' overloads are wider than the port's signatures, which name only what the store sends
  const shape = checkClientShape(client, option);
  if (shape === 'ioredis') return boundedIoredisPort(client as RedisClientPort);
  if (shape === 'glide') return new GlidePort(client as GlideClient, owned);
  return new NodeRedisPort(client as ConstructorParameters<typeof NodeRedisPort>[0], owned);
}

/**
 * The library of a client of yours, when the store takes it; checked at bootstrap, before any connection.
 * @param option the option the client was given in, for the message
 * @throws LockConfigurationError naming `option` for a client of another shape
 */
export function checkClientShape(client: unknown, option: string): 'ioredis' | 'node-redis' | 'glide' {
  const shape = clientShape(client);
  switch (shape) {
    case 'ioredis':
    case 'node-redis':
      return shape;
    case 'glide':
      // the store's subscriber is made from the client's settings, which GLIDE 2.x keeps on the instance
      if (hasGlideSettings(client as object)) return shape;
      throw new LockConfigurationError(
        option,
        client,
        `a Valkey GLIDE client whose connection settings cannot be read (GLIDE 2.x keeps them): pass ${SUPPORTED_CLIENTS}`,
      );
    default:
      throw new LockConfigurationError(option, client, `a client of unknown shape: expected ${SUPPORTED_CLIENTS}`);
  }
}
