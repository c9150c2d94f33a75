import { performance } from 'node:perf_hooks';

/**
 * The memory stores' side of the permits' guard (scripts/permit.lua.ts on Redis): a mutex caller refused
 * because permits live, and that waits, claims the key from them. From then on no new permit is granted on
 * it; once the permits that live have ended the key is the mutex's for the hand-off window, and the mutex's
 * waiters are woken. So permits that keep overlapping cannot starve a mutex.
 */
export class MutexFirst {
  /** Per claimed key, until when permits are held back (`Infinity` while the claim waits for permits to end). */
  private readonly until = new Map<string, number>();
  /** Per key claimed and waiting for permits to end, when the last of its claimants' waits ends. */
  private readonly claimedUntil = new Map<string, number>();

  /**
   * @param window how long, in ms, the key stays the mutex's after the last permit ended
   * @param onFree wakes the mutex's waiters of a key whose last permit ended
   */
  constructor(
    private readonly window: number,
    private readonly onFree: (key: string) => void,
  ) {}

  /**
   * A mutex caller that waits claims `key` from its live permits, as long as it waits (`waitEnds`, a
   * `performance.now()` time): a claim nobody waits for any more would keep new permits out while the live ones
   * are renewed.
   */
  claim(key: string, waitEnds: number): void {
    const until = this.until.get(key);
    if (until === undefined || until <= performance.now()) this.until.set(key, Infinity);
    this.claimedUntil.set(key, Math.max(this.claimedUntil.get(key) ?? 0, waitEnds));
  }

  /**
   * For how many ms permits of `key` are held back by a claim, `undefined` when they are not.
   * @param lastPermitEnd when the last live permit of the key ends (`performance.now()` time)
   */
  holdsFor(key: string, now: number, lastPermitEnd: number | undefined): number | undefined {
    const until = this.until.get(key);
    if (until === undefined) return undefined;
    if (until === Infinity && now >= (this.claimedUntil.get(key) ?? Infinity)) {
      this.until.delete(key);
      this.claimedUntil.delete(key);
      return undefined;
    }
    if (until === Infinity) return Math.max(0, (lastPermitEnd ?? now) - now) + this.window;
    if (until > now) return until - now;
    this.until.delete(key);
    return undefined;
  }

  /** The last permit of `key` ended: a claim on it now holds the key for the mutex for the window. */
  permitsEnded(key: string, now: number): void {
    if (this.until.get(key) !== Infinity) return;
    this.claimedUntil.delete(key);
    this.until.set(key, now + this.window);
    this.onFree(key);
  }

  /** The mutex took the key: its claim is spent (the lease itself keeps permits out now). */
  served(key: string): void {
    if (this.until.get(key) !== Infinity) this.until.delete(key);
    this.claimedUntil.delete(key);
  }
}
