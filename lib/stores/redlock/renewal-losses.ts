/** How many losses are kept for `wasRevoked`; past it the oldest go (their holders asked long ago, or never will). */
const MAX_KEPT = 10_000;

/**
 * What Redlock renewal rounds found about the leases they lost: whether a node that answered remembered the
 * token as revoked by an operator. The engine asks `wasRevoked` as soon as a renewal reports a lease lost, and
 * the holder's signal aborts only with that answer: read from the renewal's own answers, it costs no second
 * round, which with a silent node would wait out that node's timeout while the holder's section still runs.
 */
export class RenewalLosses {
  /** By token (random per acquisition, never reused): the key it held and whether it was revoked. */
  private readonly losses = new Map<string, { readonly key: string; readonly revoked: boolean }>();

  /** Notes that a renewal found the lease `token` held of `key` lost, and whether it was revoked. */
  record(key: string, token: string, revoked: boolean): void {
    this.losses.delete(token);
    this.losses.set(token, { key, revoked });
    // bounded: a loss nobody asks about (a store used without the engine) must not stay for ever
    if (this.losses.size > MAX_KEPT) this.losses.delete(this.losses.keys().next().value as string);
  }

  /** Whether the lease was revoked, as its renewal found it, once; `undefined` when no renewal found it lost. */
  take(key: string, token: string): boolean | undefined {
    const loss = this.losses.get(token);
    if (loss?.key !== key) return undefined;
    this.losses.delete(token);
    return loss.revoked;
  }
}
