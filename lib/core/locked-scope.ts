import { performance } from 'node:perf_hooks';
import { withKeyTemplate } from '../errors/lock.error.js';
import type { LockLostError } from '../errors/lock-lost.error.js';
import type { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { LockStoreError } from '../errors/lock-store.error.js';
import type { LockSettings } from '../options/lock-settings.js';
import { heldInFlow } from './lock-context.js';
import { reenter } from './permits/permit-reentry.js';
import type { Lock } from './lock.js';

/** How a locked scope treats contention and release. @internal */
export interface LockedScopeOptions<C> {
  /** Keep the leases until at least this many ms after the scope started. */
  readonly holdAtLeast?: number;
  /**
   * Asked as the scope ends: keep the leases until then (ms since the epoch), and not past it (a scheduled
   * run's claim on its tick); a time already past releases them. Takes the place of `holdAtLeast`.
   */
  readonly keepUntil?: () => number;
  /** Called instead of throwing when a key stays held past the wait; its result is the scope's. */
  readonly onContention?: (error: LockNotAcquiredError) => C;
  /** The key template each key is reported under, when the keys of one scope have different ones. */
  readonly keyTemplateOf?: (key: string) => string | undefined;
}

/** The keys of one scope, each once, and how to take them. */
export interface ScopeRequest {
  readonly keys: readonly string[];
  readonly settings: LockSettings;
  readonly keyTemplateOf?: (key: string) => string | undefined;
}

/** What taking a scope's keys needs from its manager. */
export interface ScopeHost {
  /** The manager whose leases the calling flow may already hold (a nested scope reuses them). */
  readonly owner: object;
  /** Takes one key as `acquire` does: a refusal is a `LockNotAcquiredError`. */
  acquire(key: string, settings: LockSettings): Promise<Lock>;
  /** Releases locks, never throwing. */
  releaseAll(locks: readonly Lock[]): Promise<void>;
}

/** The locks of a scope in the order of its keys, and those of them it took (the rest an enclosing scope holds). */
export interface ScopeLocks {
  readonly locks: Lock[];
  readonly taken: Lock[];
}

/**
 * Takes every key, and makes sure each lease is still valid when the section is about to start: with
 * several keys, the first lease can end while the last is taken (a stall, a store too slow to renew it).
 * Then every lease taken is released and the set is taken again while the wait lasts; after that, the
 * scope fails with a `LockStoreError`, never runs on a lease that ended.
 */
export async function takeScope(request: ScopeRequest, host: ScopeHost): Promise<ScopeLocks> {
  const { settings, keyTemplateOf } = request;
  const deadline = performance.now() + settings.wait;
  for (let wait = settings.wait; ;) {
    const acquired = await takeAll(
      wait === settings.wait ? request : { ...request, settings: { ...settings, wait } },
      host,
    );
    const ended = acquired.locks.find((lock) => !lock.isHeld);
    if (!ended) return acquired;
    await host.releaseAll(acquired.taken);
    wait = Math.floor(deadline - performance.now());
    if (wait <= 0) throw withKeyTemplate(endedBeforeStart(ended), keyTemplateOf?.(ended.key) ?? settings.metricKey);
  }
}

/**
 * Takes every key in a stable order (so two callers never deadlock on each other), reusing what this
 * flow already holds when that covers the request (see `reenter`); on any failure releases what it took and rethrows.
 */
async function takeAll({ keys, settings, keyTemplateOf }: ScopeRequest, host: ScopeHost): Promise<ScopeLocks> {
  const byKey = new Map<string, Lock>();
  const taken: Lock[] = [];
  try {
    for (const key of keys.length === 1 ? keys : [...keys].sort()) {
      const reentrant = heldInFlow(host.owner, key);
      if (reentrant) {
        byKey.set(key, reenter(reentrant, settings.shape));
        continue;
      }
      const template = keyTemplateOf?.(key);
      const lock = await host.acquire(key, template === undefined ? settings : { ...settings, metricKey: template });
      byKey.set(key, lock);
      taken.push(lock);
    }
  } catch (error) {
    await host.releaseAll(taken);
    throw error;
  }
  return { locks: keys.map((key) => byKey.get(key) as Lock), taken };
}

/**
 * The error of a locked scope whose lease on one key ended before the section could start (while its other
 * keys were taken) and whose wait left no time to take the set again.
 */
function endedBeforeStart(lock: Lock): LockStoreError {
  const lost = lock.signal.aborted ? (lock.signal.reason as LockLostError) : undefined;
  return new LockStoreError(
    'acquire',
    lock.key,
    lost,
    `its lease ended before the section could start (${lost ? `lost: ${lost.reason}` : 'its validity ran out'}), ` +
      "so the section was not run and the scope's leases were released. Each lease of a scope must outlast the " +
      "taking of its other keys: the store, or this process's event loop, is too slow for this ttl",
  );
}
