import { performance } from 'node:perf_hooks';
import type { DirectGrant } from '../../../interfaces/waiting-line.interface.js';

/** One request left in the line (see ACQUIRE's offer): who asked, when, and what the release granted it. */
export interface PendingOffer {
  readonly key: string;
  readonly token: string;
  readonly sentAt: number;
  readonly ttl: number;
  /** Past this `performance.now()` time, a grant of this withdrawn offer has ended by its ttl. */
  endsBy: number;
  granted?: { readonly fence: number };
  /** Its token asks no more (its waiter left, or waits on with another token): a grant for it is given back. */
  withdrawn: boolean;
}

/**
 * The offers a store's waiters left in the lines of the keys they wait for, by version (one per refused
 * request), so that a release notice saying "granted version v" reaches the waiter whose request that was,
 * exactly once, with the time from which its lease counts; and so that a grant nobody will take (its token's
 * waiter withdrew it) is given back at once instead of blocking the key for a ttl. Only a withdrawn token's:
 * the give-back is a token-checked release, and a waiter still asking with that token would be told it holds
 * the key by its next request (the key is its token's) just before the give-back deleted it. Several waiters
 * of one store may stand in a key's line at once (two managers sharing the store), so a newer request of
 * another token says nothing about an older one.
 */
export class DirectGrants {
  private readonly offers = new Map<number, PendingOffer>();
  private nextVersion = 1;

  /** Registers a request about to be sent with an offer; returns the version it stands under. */
  offer(key: string, token: string, ttl: number, sentAt: number): number {
    this.forget(key, token, sentAt);
    const version = this.nextVersion++;
    this.offers.set(version, { key, token, sentAt, ttl, endsBy: Infinity, withdrawn: false });
    return version;
  }

  /**
   * A notice said version `version` was granted. `wake` (the key) when a waiter may take it; the offer to
   * give back when none will (its waiter left, or another waiter took its turn); nothing for a version this
   * store does not know (any grant of it has long ended).
   */
  arrived(version: number, fence: number): { readonly wake: string } | { readonly giveBack: PendingOffer } | undefined {
    const offer = this.offers.get(version);
    if (!offer) return undefined;
    if (offer.withdrawn) {
      this.offers.delete(version);
      return { giveBack: offer };
    }
    offer.granted = { fence };
    return { wake: offer.key };
  }

  /** The grant that came for `token`'s request on `key`, once: the waiter holds the lease from now on. */
  take(key: string, token: string): DirectGrant | undefined {
    for (const offer of this.offers.values()) {
      if (offer.key !== key || offer.token !== token || !offer.granted) continue;
      // its other requests are spent with it: one lease per key
      this.spent(key, token);
      return { fence: offer.granted.fence, sentAt: offer.sentAt };
    }
    return undefined;
  }

  /** `token` holds `key` by another way (its own request was granted): its offers are spent. */
  spent(key: string, token: string): void {
    for (const [version, offer] of this.offers) {
      if (offer.key === key && offer.token === token) this.offers.delete(version);
    }
  }

  /**
   * `token` asks for `key` no more (its waiter stopped waiting, or waits on with a new token): returns the grants
   * it had and did not take, to give back; one that comes later is given back when it arrives.
   */
  withdraw(key: string, token: string): PendingOffer[] {
    const untaken: PendingOffer[] = [];
    for (const [version, offer] of this.offers) {
      if (offer.key !== key || offer.token !== token) continue;
      if (offer.granted) {
        this.offers.delete(version);
        untaken.push(offer);
      } else {
        offer.withdrawn = true;
        // a notice can trail its grant; twice the ttl from now leaves room for that, and no grant outlives it
        offer.endsBy = performance.now() + 2 * offer.ttl;
      }
    }
    return untaken;
  }

  /**
   * Forgets withdrawn offers whose grant would have ended, and all but the latest few requests of `token`
   * on `key`: a release reads the request that stands in the line when it runs, so a grant of an older one
   * can only come from a release that ran before the newer ones were written, and its notice is on its way.
   */
  private forget(key: string, token: string, now: number): void {
    let kept = 0;
    for (const [version, offer] of [...this.offers].reverse()) {
      if (offer.endsBy < now) this.offers.delete(version);
      else if (offer.key === key && offer.token === token && !offer.granted && ++kept > KEPT_REQUESTS) {
        this.offers.delete(version);
      }
    }
  }
}

/** How many of a waiter's latest requests in a line a store remembers (see DirectGrants.forget). */
const KEPT_REQUESTS = 4;
