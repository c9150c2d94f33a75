import type { RedisClientPort, RedisClusterPort } from './client/redis-client-port.js';
import { raceDeadline } from '../../utils/deadline.js';
import { unboundedClient } from './client/bounded-ioredis-port.js';
import { isCluster } from './client/port-settings.js';
import { keySlot } from '../../utils/key-slot.js';
import { needsSlotRoutedSubscriber, SlotRoutedSubscriber, type SubscriberPort } from './slot-routed-subscriber.js';
import { errorMessage, redisStoreError } from './store-error.js';

/** How long a check waits for a Cluster client to learn its topology before it reports the cluster unreachable. */
const CLUSTER_READY_TIMEOUT = 10_000;

/**
 * A subscriber's own client, with the same nodes and options as `client`. ioredis routes SSUBSCRIBE to the
 * master of the channel's slot only with `shardedSubscribers` (one connection per master); without it every
 * SSUBSCRIBE goes to one random node and fails with MOVED for two slots in three, so a Cluster client without
 * that option (iovalkey) gets a {@link SlotRoutedSubscriber} instead.
 */
export function subscriberClient(client: RedisClientPort): SubscriberPort {
  if (!isCluster(client)) return client.duplicate();
  if (needsSlotRoutedSubscriber(client)) return new SlotRoutedSubscriber(client.duplicate() as RedisClusterPort);
  return client.duplicate([], { shardedSubscribers: true });
}

/**
 * The masters of a Cluster once the client knows them; a client that never connects fails in bounded time.
 * @throws LockStoreError saying the Cluster is unreachable, with the client's last error, or knows no master
 */
export async function clusterMasters(cluster: RedisClusterPort): Promise<RedisClientPort[]> {
  let lastError: unknown;
  // the client reports why it cannot connect only through 'error' events (e.g. a server without cluster mode)
  const onError = (error: unknown): void => {
    lastError = error;
  };
  cluster.on('error', onError);
  try {
    // a command waits in the client's offline queue until it has learnt the slots: on the client itself, as
    // the store's bound on a client without a command timeout would end the wait before this deadline
    await raceDeadline(unboundedClient(cluster).ping(), CLUSTER_READY_TIMEOUT, () => {
      // ioredis' "Failed to refresh slots cache" carries the node's own answer in lastNodeError
      const cause = (lastError as { lastNodeError?: unknown } | undefined)?.lastNodeError;
      const reason =
        lastError === undefined
          ? ''
          : `; last error: ${errorMessage(lastError)}${cause ? ` (${errorMessage(cause)})` : ''}`;
      throw new Error(`not ready within ${CLUSTER_READY_TIMEOUT} ms (status ${cluster.status}${reason})`);
    });
  } catch (error) {
    throw redisStoreError('reach', undefined, error, `Redis Cluster unreachable: ${errorMessage(error)}`);
  } finally {
    cluster.off('error', onError);
  }
  const masters = cluster.nodes('master');
  if (masters.length === 0) {
    throw redisStoreError('reach', undefined, undefined, 'the Cluster client knows no master node');
  }
  return masters;
}

/** Indexes of `keys` grouped by the node that serves their slot (all in one group on a single server). */
export function groupByNode(client: RedisClientPort, keys: readonly string[]): number[][] {
  if (!isCluster(client)) return [keys.map((_key, index) => index)];
  const slots = client.slots;
  const groups = new Map<string, number[]>();
  keys.forEach((key, index) => {
    const slot = keySlot(key);
    // before the client has learnt the topology, each slot is its own group
    const owner = slots[slot]?.join(';') ?? `slot ${slot}`;
    const group = groups.get(owner);
    if (group) group.push(index);
    else groups.set(owner, [index]);
  });
  return [...groups.values()];
}
