import { LockStoreError } from '../../errors/lock-store.error.js';

/**
 * A grant that reached the manager only after the validity of its lease had ended (`sentAt + ttl - drift`,
 * on the monotonic clock): the store may already have expired it and granted the key to someone else, so it
 * is never handed to a caller.
 */
export interface LateGrant {
  readonly key: string;
  /** The lease length asked for, in ms. */
  readonly ttl: number;
  /** Time from sending the request to reading the grant, in ms. */
  readonly elapsed: number;
  /** How many ms after the validity ended the grant was read. */
  readonly lateBy: number;
}

/** What a late grant says about its timing, for errors and logs. */
export function describeLateGrant(grant: Pick<LateGrant, 'ttl' | 'elapsed' | 'lateBy'>): string {
  return (
    `the grant came back ${Math.ceil(grant.lateBy)} ms after its validity ended ` +
    `(${Math.round(grant.elapsed)} ms after the request was sent, for a ${grant.ttl} ms lease)`
  );
}

/**
 * The error of an acquisition whose last grant came back late, with no wait left to try again: a store
 * failure (HTTP 503), not contention, as nobody else needs to hold the key.
 */
export function lateGrantError(grant: LateGrant): LockStoreError {
  return new LockStoreError(
    'acquire',
    grant.key,
    undefined,
    `${describeLateGrant(grant)}, so it was released unused: the store, or this process's event loop, is too ` +
      'slow for this ttl. Use a longer ttl, or find what delays the store replies or blocks the event loop',
  );
}
