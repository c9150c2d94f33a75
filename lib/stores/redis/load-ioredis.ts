import type { Cluster, Redis } from '../../interfaces/ioredis-types.js';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';

/** The client classes of `ioredis`. */
export interface Ioredis {
  readonly Redis: typeof Redis;
  readonly Cluster: typeof Cluster;
}

/**
 * `ioredis`, loaded when a Redis store is built and only then: it is an optional peer, so the package, the
 * memory store and a store of your own work without it.
 * @param option the option that asked for Redis, and its value, for the message when ioredis is missing
 * @throws LockConfigurationError saying to install ioredis
 */
export async function loadIoredis(option: string, value: unknown): Promise<Ioredis> {
  try {
    const { Redis: RedisClient, Cluster: ClusterClient } = await import('ioredis');
    return { Redis: RedisClient, Cluster: ClusterClient };
  } catch (error) {
    throw new LockConfigurationError(
      option,
      value,
      `a Redis store needs the package ioredis, which cannot be loaded (${error instanceof Error ? error.message : String(error)}): npm install ioredis`,
    );
  }
}
