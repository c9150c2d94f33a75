import { decodeHolder } from '../core/lock-holder.js';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import type { LockListing } from '../interfaces/lock-listing.interface.js';
import type { PermitState } from '../interfaces/permit-store.interface.js';
import type {
  LockHolderSummary,
  LockKind,
  LockList,
  LockListOptions,
  LockSummary,
} from '../interfaces/lock-summary.interface.js';
import { readListCursor, writeListCursor } from './list-cursor.js';
import { leaderKey } from '../leadership/leader-key.js';

/** How many locks a page holds unless asked otherwise. */
export const DEFAULT_LIST_LIMIT = 100;
/** The most locks one page may hold: each costs the store a read or two. */
export const MAX_LIST_LIMIT = 1000;

/** The start every leadership key shares. */
const LEADERSHIP_KEYS = leaderKey('');

/**
 * The store's listing, or a refusal that names the store.
 * @throws LockConfigurationError when the store offers no listing
 */
export function listingOf(store: LockStore): LockListing {
  const listing = store.capabilities?.listing;
  if (listing) return listing;
  const why = store.capabilities?.absent?.listing ?? 'it offers no listing capability';
  throw new LockConfigurationError('store', store.constructor.name, `cannot list locks: ${why}`);
}

/**
 * One page of the held locks of `store`: its listing names the keys, then each is read as `inspect` reads it
 * (lease and permits). A key freed between the two reads is left out.
 * @throws LockConfigurationError for a bad `limit` or `cursor`, or a store without listing
 */
export async function listLocks(store: LockStore, options: LockListOptions = {}): Promise<LockList> {
  const limit = options.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new LockConfigurationError('limit', limit, `expected a whole number from 1 to ${MAX_LIST_LIMIT}`);
  }
  const prefix = options.prefix ?? '';
  const page = await listingOf(store).keys({
    limit,
    ...(prefix ? { prefix } : {}),
    ...(options.cursor ? { cursor: readListCursor(prefix, options.cursor) } : {}),
  });
  const locks = await Promise.all(page.keys.map((key) => describeLock(store, key)));
  return {
    locks: locks.filter((lock): lock is LockSummary => lock !== undefined),
    ...(page.cursor ? { cursor: writeListCursor(prefix, page.cursor) } : {}),
  };
}

/**
 * What holds `key` right now; `undefined` while it is free.
 * @throws LockConfigurationError for a store without listing
 */
export async function describeLock(store: LockStore, key: string): Promise<LockSummary | undefined> {
  const listing = listingOf(store);
  const [lease, permits, waiters] = await Promise.all([
    store.inspect(key),
    store.capabilities?.permits?.inspect(key),
    listing.waiters(key),
  ]);
  if (permits?.held) return permitSummary(key, permits, waiters);
  if (!lease.held) return undefined;
  const holder: LockHolderSummary = {
    ...decodeHolder(lease.holder),
    ...(lease.remainingTtl === undefined ? {} : { remainingTtl: lease.remainingTtl }),
  };
  return {
    key,
    kind: key.startsWith(LEADERSHIP_KEYS) ? 'leadership' : 'mutex',
    holders: [holder],
    waiters: waiters + (permits?.waiting ?? 0),
    ...(lease.fence === undefined ? {} : { fence: lease.fence }),
  };
}

/** A key held by permits: each permit a holder, the line's places its waiters. */
function permitSummary(key: string, state: PermitState, waiters: number): LockSummary {
  const kind: LockKind = state.limit === undefined ? 'readers-writer' : 'semaphore';
  return {
    key,
    kind,
    holders: state.permits.map((permit) => ({
      ...decodeHolder(permit.holder),
      remainingTtl: permit.remainingTtl,
      ...(permit.fence === undefined ? {} : { fence: permit.fence }),
      ...(permit.mode === undefined ? {} : { mode: permit.mode }),
    })),
    waiters: waiters + state.waiting,
    ...(state.limit === undefined ? {} : { limit: state.limit }),
    ...(state.mode === undefined ? {} : { mode: state.mode }),
    ...(state.fence === undefined ? {} : { fence: state.fence }),
  };
}
