import type { RedisClientPort } from './client/redis-client-port.js';
import { readStoredLease } from './lease-value.js';
import { pipelineValues } from './store-error.js';

/** The `replicaAck` option (`ReplicaAckOptions`) checked, the timeout in ms. */
export interface ReplicaAck {
  readonly replicas: number;
  readonly timeout: number;
}

/** What WAIT answered, and the token each lock key holds on the same master right after it. */
export interface ReplicaAckOutcome {
  readonly acknowledged: number;
  readonly holders: ReadonlyArray<string | null>;
}

/**
 * Sends WAIT on the connection that made the writes (on a Cluster, the master of the slot of `locks`, which
 * must all be served by one node), then reads every lock key back on that same master: a key that is not
 * there any more was lost between the write and the WAIT (a failover), whatever WAIT says.
 */
export async function awaitReplicas(
  client: RedisClientPort,
  ack: ReplicaAck,
  locks: readonly string[],
): Promise<ReplicaAckOutcome> {
  // WAIT has no key: in a Cluster pipeline it goes where the keys of the commands after it route the pipeline
  const pipeline = client.pipeline().call('WAIT', ack.replicas, ack.timeout);
  for (const lock of locks) pipeline.get(lock);
  const values = pipelineValues(await pipeline.exec());
  const holders = (values.slice(1) as Array<string | null>).map((value) => {
    const stored = readStoredLease(value);
    return stored?.lease ? stored.token : null;
  });
  return { acknowledged: Number(values[0]), holders };
}
