import type { ReleaseWatch } from '../../interfaces/lease.interface.js';
import { NotifiableWatch } from '../shared/notifiable-watch.js';

/**
 * The release watches of an in-process store, by key: what a Redis store's subscriber does for notices, done
 * by the store itself when a lease or permit ends. A key's set goes once its last watch closes.
 */
export class LocalWatches {
  private readonly byKey = new Map<string, Set<NotifiableWatch>>();

  /** A new watch of `key`, woken by {@link wake}. */
  watch(key: string): ReleaseWatch {
    let set = this.byKey.get(key);
    if (!set) this.byKey.set(key, (set = new Set()));
    const watches = set;
    const watch = new NotifiableWatch((closed) => {
      watches.delete(closed);
      if (watches.size === 0 && this.byKey.get(key) === watches) this.byKey.delete(key);
    });
    watches.add(watch);
    return watch;
  }

  /** How many watches of `key` are open: the waiters of an in-process store. */
  count(key: string): number {
    return this.byKey.get(key)?.size ?? 0;
  }

  /** Wakes every watch of `key`. */
  wake(key: string): void {
    for (const watch of this.byKey.get(key) ?? []) watch.wake();
  }

  /** Wakes every watch of every key (the store is closing). */
  wakeAll(): void {
    for (const set of this.byKey.values()) for (const watch of set) watch.wake();
  }
}
