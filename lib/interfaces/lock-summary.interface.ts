import type { LockHolder } from './lock-info.interface.js';
import type { PermitMode } from './permit-store.interface.js';

/** What a held key is used as: a mutex lease, a semaphore, a readers-writer lock, or a leadership's lease. */
export type LockKind = 'mutex' | 'semaphore' | 'readers-writer' | 'leadership';

/** One holder of a lock as an operator sees it; never its token. */
export interface LockHolderSummary extends Partial<LockHolder> {
  /** Its remaining lease in ms. */
  readonly remainingTtl?: number;
  /** The fence it was granted with, when fencing was on. */
  readonly fence?: number;
  /** On a readers-writer lock: whether it reads or writes. */
  readonly mode?: PermitMode;
}

/** One held lock as `LockService.list` and `LockService.describe` show it: no token, ever. */
export interface LockSummary {
  /** The key as the application wrote it, without the module's key prefix. */
  readonly key: string;
  readonly kind: LockKind;
  /** Who holds it: one for a mutex, each permit for a semaphore or readers-writer lock. */
  readonly holders: readonly LockHolderSummary[];
  /** How many wait for it, as far as the store can tell (processes in its line, or callers in one process). */
  readonly waiters: number;
  /** A semaphore's limit. */
  readonly limit?: number;
  /** A readers-writer lock's mode: `write` while a writer holds it, else `read`. */
  readonly mode?: PermitMode;
  /** The last fence granted for the key, when fencing has been used on it. */
  readonly fence?: number;
}

/** Which locks `LockService.list` returns. */
export interface LockListOptions {
  /** Only keys that start with this text. */
  readonly prefix?: string;
  /** The most locks to return. @default 100 */
  readonly limit?: number;
  /** Where a previous call stopped (its `cursor`), to read the next page. */
  readonly cursor?: string;
}

/** One page of held locks. */
export interface LockList {
  readonly locks: readonly LockSummary[];
  /** Pass it back as `cursor` for the next page; absent once every key was seen. */
  readonly cursor?: string;
}

/** What a forced release (`LockService.forceRelease`) did. */
export interface ForcedRelease {
  readonly key: string;
  /** How many leases and permits it ended (0: the key was free). */
  readonly ended: number;
  /** The key's fence after it, above every fence granted before: old holders' fenced writes are refused. */
  readonly fence: number;
}
