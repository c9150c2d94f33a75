import { Redis } from 'ioredis';
import { clusterKind, uniquePrefix } from './stores.js';

/** What each test on the file's Redis Cluster (clusterKind's) works in; made fresh and cleaned up per test. */
export interface ClusterRoom {
  /** The key prefix of this test. */
  readonly keyPrefix: string;
  /** What the test started, undone after it, last first. */
  readonly cleanups: Array<() => unknown>;
  /** A client on the one node at `port`, for looking inside it; closed after the test. */
  direct(port: number): Redis;
}

/**
 * Starts the file's Redis Cluster before the calling `describe` and stops it after; sets up a {@link ClusterRoom}
 * before each of its tests, and tears it down after.
 */
export function useClusterRoom(): ClusterRoom {
  let keyPrefix = '';
  const cleanups: Array<() => unknown> = [];

  beforeAll(() => clusterKind.cluster(), 60_000);
  afterAll(() => clusterKind.stop());

  beforeEach(() => {
    keyPrefix = uniquePrefix();
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  return {
    get keyPrefix() {
      return keyPrefix;
    },
    cleanups,
    direct(port) {
      const client = new Redis(port, '127.0.0.1');
      client.on('error', () => undefined);
      cleanups.push(() => client.quit().catch(() => client.disconnect()));
      return client;
    },
  };
}
