import type { Cluster, Redis } from '../../interfaces/ioredis-types.js';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { toMilliseconds } from '../../utils/duration.js';
import { checkOptionNames, REPLICA_ACK_OPTIONS } from '../../options/option-names.js';
import { validateInteger } from '../../options/validate-options.js';
import { readStoredLease } from './lease-value.js';
import { pipelineValues } from './store-error.js';
import type { ReplicaAckOptions } from '../../interfaces/replica-ack-options.interface.js';

export type { ReplicaAckOptions } from '../../interfaces/replica-ack-options.interface.js';

/** {@link ReplicaAckOptions} checked, the timeout in ms. */
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
 * Checks the `replicaAck` option against the client it will run on.
 * @param commandTimeout the client's `commandTimeout` in ms, when it has one
 * @throws LockConfigurationError naming the field that cannot work
 */
export function resolveReplicaAck(value: unknown, commandTimeout: number | undefined): ReplicaAck | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LockConfigurationError(
      'replicaAck',
      value,
      'expected { replicas, timeout }, e.g. { replicas: 1, timeout: 50 }',
    );
  }
  checkOptionNames(value, REPLICA_ACK_OPTIONS, 'replicaAck');
  const options = value as ReplicaAckOptions;
  const replicas = validateInteger('replicaAck.replicas', options.replicas, 1);
  const timeout = toMilliseconds(options.timeout, 'replicaAck.timeout');
  if (commandTimeout !== undefined && timeout >= commandTimeout) {
    throw new LockConfigurationError(
      'replicaAck.timeout',
      options.timeout,
      `expected less than the client's commandTimeout (${commandTimeout} ms), or the client gives up on WAIT before Redis answers`,
    );
  }
  return { replicas, timeout };
}

/**
 * Sends WAIT on the connection that made the writes (on a Cluster, the master of the slot of `locks`, which
 * must all be served by one node), then reads every lock key back on that same master: a key that is not
 * there any more was lost between the write and the WAIT (a failover), whatever WAIT says.
 */
export async function awaitReplicas(
  client: Redis | Cluster,
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
