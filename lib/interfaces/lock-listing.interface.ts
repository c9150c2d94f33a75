/** What a store is asked to list: the held keys that start with `prefix`, at most `limit` of them. */
export interface LockListingQuery {
  /** Only keys that start with this text (the user's key, without the store's key prefix). */
  readonly prefix?: string;
  /** The most keys to return; a store may return fewer and a `cursor` to go on from. */
  readonly limit: number;
  /** Where a previous page stopped (its `cursor`); absent for the first page. */
  readonly cursor?: string;
}

/** One page of held keys; bounded work per call, so a large key space takes several. */
export interface LockListingPage {
  /** The user keys (without the store's key prefix) of held leases and permits, each once. */
  readonly keys: readonly string[];
  /** Where to go on from; absent once the whole key space was seen. */
  readonly cursor?: string;
}

/**
 * The operator's view of a store: which keys are held right now, and how many processes wait for a key. The
 * details of each key come from `inspect` (and `capabilities.permits.inspect`); a listing never holds a token.
 */
export interface LockListing {
  /** The held keys of one page; a key freed while the page was read may still be in it. */
  keys(query: LockListingQuery): Promise<LockListingPage>;
  /** How many processes stand in the mutex line of `key` (0 for a store without a line). */
  waiters(key: string): Promise<number>;
}

/** What a forced release ended. */
export interface LockRevocation {
  /** How many leases and permits of the key it ended (0: nothing was held). */
  readonly ended: number;
  /** The key's fence after it: above every fence granted for the key before, so old holders' writes are refused. */
  readonly fence: number;
}

/**
 * A forced release for operators: ends every lease and permit of a key whoever holds it, and raises the key's
 * fence in the same step. The old holders learn it at their next renewal (`LockLostError` reason `revoked`).
 */
export interface LockRevoking {
  /** Ends every lease and permit of `key` and raises its fence. */
  revoke(key: string): Promise<LockRevocation>;
  /** Whether the lease `token` held of `key` was ended by `revoke` (asked once its renewal failed). */
  wasRevoked(key: string, token: string): Promise<boolean>;
}
