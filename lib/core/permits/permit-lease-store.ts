import type { AcquireResult, LeaseRenewal, LockState, ReleaseWatch } from '../../interfaces/lease.interface.js';
import type { LockStore } from '../../interfaces/lock-store.interface.js';
import type { PermitStore } from '../../interfaces/permit-store.interface.js';
import type { LockStoreCapabilities } from '../../interfaces/store-capabilities.interface.js';
import { permitConflictError } from './permit-conflict.js';
import type { ShapedRequest } from '../waiting/acquire-request.js';
import type { DirectGrant } from '../../interfaces/waiting-line.interface.js';

/**
 * The permits of a store seen as a store of leases, so that the acquirer and a lease book serve permits as
 * they serve mutex leases: each permit is a lease of its own token, extended, renewed and released
 * token-checked. A request carries its shape (`ShapedRequest`); a shape that disagrees with the key's is a
 * `LockConfigurationError`, thrown, never a refusal to wait on.
 */
export class PermitLeaseStore implements LockStore {
  /** The ttl rules of the store the permits belong to, with the permits' own hand-off window; its forced releases. */
  readonly capabilities: LockStoreCapabilities;

  /**
   * @param permits where the permits live
   * @param leases the store they belong to, for its clock-drift rule and its least ttl
   */
  constructor(
    readonly permits: PermitStore,
    leases: LockStore,
  ) {
    const limits = leases.capabilities?.limits;
    this.capabilities = {
      limits: {
        minTtl: limits?.minTtl,
        ...(limits?.clockDrift ? { clockDrift: (ttl: number) => limits.clockDrift!(ttl) } : {}),
        handoffWindow: permits.handoffWindow,
      },
      // a forced release ends permits too: their holders hear `revoked`
      ...(leases.capabilities?.revoking ? { revoking: leases.capabilities.revoking } : {}),
    };
  }

  /** @throws LockConfigurationError when the key is in use with another shape than the request's */
  async acquire(request: ShapedRequest): Promise<AcquireResult> {
    const { key, token, ttl, fencing, holder, waiting, shape } = request;
    if (!shape) throw new TypeError(`a permit request for "${key}" without a shape`);
    const result = await this.permits.acquire({
      key,
      token,
      ttl,
      shape,
      fencing,
      holder,
      // a permit's place is its own token's: `again` and `next` are the mutex line's, per process. Its waiter
      // watches with its token and leaves its place when it stops waiting (PermitAcquirer): a release may
      // grant it its permit directly
      waiting: waiting && { ttl: Math.max(1, Math.ceil(waiting.ttl)), direct: true },
    });
    if ('inUseAs' in result) throw permitConflictError(shape, result.inUseAs);
    return result;
  }

  release(key: string, token: string): Promise<boolean> {
    return this.permits.release(key, token);
  }

  /** Gives up the waiting place of `token`: a waiter that stops waiting. */
  leavePlace(key: string, token: string): Promise<void> {
    return this.permits.leaveLine(key, token);
  }

  extend(key: string, token: string, ttl: number): Promise<boolean> {
    return this.permits.extend(key, token, ttl);
  }

  extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    return this.permits.extendMany(renewals);
  }

  /** The key's permits as one lease: held while any permit is, until the longest-lived ends. */
  async inspect(key: string): Promise<LockState> {
    const state = await this.permits.inspect(key);
    const last = state.permits.at(-1);
    return {
      held: state.held,
      ...(last ? { remainingTtl: last.remainingTtl, holder: last.holder } : {}),
      ...(state.fence === undefined ? {} : { fence: state.fence }),
    };
  }

  watch(key: string, since?: number): Promise<ReleaseWatch> {
    return this.permits.watch(key, since);
  }

  /** The release watch of `token`'s wait: a notice of a permit granted to it directly wakes it alone. */
  watchFor(key: string, token: string, since?: number): Promise<ReleaseWatch> {
    return this.permits.watch(key, since, token);
  }

  /** The permit a release granted straight to `token`'s waiting request, once, if one did. */
  takeGrant(key: string, token: string): DirectGrant | undefined {
    return this.permits.takeGrant?.(key, token);
  }

  /** Nothing: the store the permits belong to is closed by whoever owns it. */
  async close(): Promise<void> {}
}
