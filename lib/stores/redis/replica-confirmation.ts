import type { RedisClientPort } from './client/redis-client-port.js';
import type { LockStoreError } from '../../errors/lock-store.error.js';
import type { AcquireRequest, LeaseRenewal } from '../../interfaces/lease.interface.js';
import { awaitReplicas, type ReplicaAck, type ReplicaAckOutcome } from './replica-ack.js';
import type { ResourceKeys } from './resource-keys.js';
import { errorMessage, redisStoreError } from './store-error.js';

/** What a {@link ReplicaConfirmation} needs of its store. */
export interface ConfirmingStore {
  client(): RedisClientPort;
  /** Takes a grant back, token-checked. */
  release(key: string, token: string): Promise<boolean>;
  /** The store's LockStoreError for a failed operation on `key`. */
  failure(operation: string, key: string, error: unknown): Promise<LockStoreError>;
  keysOf(key: string): ResourceKeys;
}

/**
 * The store option `replicaAck` at work: a grant or a renewal counts only once enough replicas took it
 * (WAIT), so that a failover right after cannot hand the lock to a second holder.
 */
export class ReplicaConfirmation {
  constructor(private readonly store: ConfirmingStore) {}

  /**
   * Waits for the replicas to take a grant; if they do not in time, takes the grant back (token-checked)
   * and fails: a silent grant could pass to a second holder at the next failover.
   */
  async confirmGrant(request: AcquireRequest, keys: ResourceKeys, ack: ReplicaAck): Promise<void> {
    let outcome: ReplicaAckOutcome | undefined;
    let failure: unknown;
    try {
      outcome = await awaitReplicas(this.store.client(), ack, [keys.lock]);
    } catch (error) {
      failure = error;
    }
    if (outcome && outcome.acknowledged >= ack.replicas && outcome.holders[0] === request.token) return;
    await this.store.release(request.key, request.token).catch(() => undefined);
    const detail = !outcome
      ? `could not confirm the grant with its replicas (${errorMessage(failure)}); it was released`
      : outcome.holders[0] !== request.token
        ? 'the lease was gone from its master right after the grant (a failover?); it was not granted'
        : `only ${outcome.acknowledged} of ${ack.replicas} replicas acknowledged the grant within ${ack.timeout} ms ` +
          '(option replicaAck); it was released, since a failover now could hand the lock to a second holder';
    throw redisStoreError('acquire', request.key, failure, detail);
  }

  /**
   * Waits for the replicas to take renewals that one node served: each is `true` once acknowledged, `false`
   * when the key no longer holds the token on that master, or an error (the lease keeps its earlier expiry
   * on the replicas, so the holder must not count the renewal).
   */
  async confirmRenewals(renewals: readonly LeaseRenewal[], ack: ReplicaAck): Promise<Array<boolean | Error>> {
    let outcome: ReplicaAckOutcome;
    try {
      outcome = await awaitReplicas(
        this.store.client(),
        ack,
        renewals.map((renewal) => this.store.keysOf(renewal.key).lock),
      );
    } catch (error) {
      return Promise.all(renewals.map((renewal) => this.store.failure('renew', renewal.key, error)));
    }
    return renewals.map((renewal, index) => {
      if (outcome.holders[index] !== renewal.token) return false;
      if (outcome.acknowledged >= ack.replicas) return true;
      const detail =
        `only ${outcome.acknowledged} of ${ack.replicas} replicas acknowledged the renewal within ${ack.timeout} ms ` +
        '(option replicaAck); it does not count until they do';
      return redisStoreError('renew', renewal.key, undefined, detail);
    });
  }
}
