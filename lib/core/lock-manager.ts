import { performance } from 'node:perf_hooks';
import { isLockError, withKeyTemplate } from '../errors/lock.error.js';
import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import type { LockDefaults, LockLogger, LockOptions } from '../interfaces/lock-options.interface.js';
import type { LockInfo } from '../interfaces/lock-info.interface.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import { Acquirer } from './acquirer.js';
import { HoldTimes } from './hold-times.js';
import { LeaseBook } from './lease-book.js';
import { LocalQueue } from './local-queue.js';
import { PermitEngine, permitInfo } from './permit-engine.js';
import { hasPermits } from '../stores/permits/permits-of.js';
import { logLockEvents } from '../events/lock-event-logger.js';
import { LockEvents, type LockEventListener, type LockEventName } from '../events/lock-events.js';
import { LockObserver } from '../events/lock-observer.js';
import { currentFrame, heldInFlow, runWithLocks } from './lock-context.js';
import type { Lock } from './lock.js';
import { takeScope, type LockedScopeOptions, type ScopeHost } from './locked-scope.js';
import { retryAfterSeconds } from './retry-after.js';
import { ShutdownGate } from './shutdown-gate.js';
import {
  checkDriftAllowance,
  checkHandoffWindow,
  checkStoreMinimum,
  checkTtlForStore,
} from '../options/lease-bounds.js';
import {
  DEFAULT_MAX_KEY_LENGTH,
  DEFAULT_SETTINGS,
  resolveSettings,
  type LockSettings,
} from '../options/lock-settings.js';
import { MAX_DURATION, toMilliseconds, type Duration } from '../utils/duration.js';
import { toLockInfo } from './lock-holder.js';
import { CALL_OPTIONS, checkOptionNames, MANAGER_OPTIONS, TRY_OPTIONS } from '../options/option-names.js';
import {
  validateBoolean,
  validateKey,
  validateLogger,
  validateMaxKeyLength,
  validateOptionsObject,
  validateStore,
} from '../options/validate-options.js';

/** Options of a {@link LockManager}: a store and the defaults of every acquisition. */
export interface LockManagerOptions extends LockDefaults {
  /** Where leases live. */
  readonly store: LockStore;
  /** Where lost leases and store failures are reported. @default silent */
  readonly logger?: LockLogger;
  /** Close the store in `close()`; leave it `false` for a store someone else still uses. @default true */
  readonly closeStore?: boolean;
  /**
   * How long `close()` lets holders that are inside their locked section finish before it ends their
   * leases (never past a lease's own end: renewals stop when the shutdown starts); `0` ends them at once.
   * @default '5s'
   */
  readonly drainTimeout?: Duration;
}

/** How long `close()` waits for holders to finish by default, in ms. */
export const DEFAULT_DRAIN_TIMEOUT = 5000;

/**
 * The lock engine without Nest: acquires leases with a wait policy (local FIFO queue, release notices,
 * bounded backoff), renews them, scopes them to async flows, and releases them on close. With `limit` or
 * `mode` in a call's options, a lease is one permit of a semaphore or readers-writer lock (a `Lock` of its
 * own, waiting in the store's line). `LockService` is this engine as a Nest provider.
 */
export class LockManager {
  /** The store leases live in. */
  readonly store: LockStore;
  protected readonly settings: LockSettings;
  protected readonly logger?: LockLogger;
  private readonly maxKeyLength: number;
  /** The local waiters per key: acquisitions line up in them, releases wake them and hand leases to their heads. */
  private readonly queues = new Map<string, LocalQueue>();
  private readonly closeStore: boolean;
  private readonly events: LockEvents;
  private readonly observer: LockObserver;
  private readonly holdTimes = new HoldTimes();
  private readonly drainTimeout: number;
  private readonly shutdown: ShutdownGate;
  private readonly leases: LeaseBook;
  private readonly acquirer: Acquirer;
  /** Semaphores and readers-writer locks, from the first call that asks for a `limit` or `mode`. */
  private permits?: PermitEngine;
  private closing?: Promise<void>;
  /** The settings of a lease handed to the caller (`acquire`, `tryAcquire`) with no options: not renewed. */
  private readonly handedOutSettings: LockSettings;
  /** How a locked scope takes its keys: as `acquire` does, reusing what the flow holds of this manager. */
  private readonly scopeHost: ScopeHost = {
    owner: this,
    acquire: (key, settings) => this.acquireWith(key, settings),
    releaseAll: (locks) => this.releaseAll(locks),
  };

  /**
   * @throws LockConfigurationError when an option is invalid, has an unknown name, or its ttl cannot work
   *   with the store (drift allowance, hand-off window, the store's least ttl)
   */
  constructor(options: LockManagerOptions) {
    validateOptionsObject(options);
    checkOptionNames(options, MANAGER_OPTIONS);
    this.store = validateStore(options.store);
    this.logger = validateLogger(options.logger);
    this.maxKeyLength = validateMaxKeyLength(options.maxKeyLength ?? DEFAULT_MAX_KEY_LENGTH);
    this.settings = resolveSettings(DEFAULT_SETTINGS, options);
    this.handedOutSettings = { ...this.settings, autoRenew: false };
    this.closeStore = validateBoolean('closeStore', options.closeStore ?? true);
    this.drainTimeout =
      options.drainTimeout === undefined
        ? DEFAULT_DRAIN_TIMEOUT
        : toMilliseconds(options.drainTimeout, 'drainTimeout', { zero: 'allowed' });
    this.events = new LockEvents(this.logger);
    this.observer = new LockObserver(this.events);
    if (this.logger) logLockEvents(this.events, this.logger);
    this.shutdown = new ShutdownGate(this.store);
    const { store, observer, queues, shutdown, holdTimes } = this;
    this.leases = new LeaseBook({ store, observer, queues, shutdown, holdTimes });
    this.acquirer = new Acquirer({ store, observer, leases: this.leases, queues, shutdown });
    checkDriftAllowance(this.settings.ttl, this.leases.drift(this.settings.ttl), 'ttl');
    checkHandoffWindow(this.store.handoffWindow, this.settings.ttl, 'handoffWindow');
    checkStoreMinimum(this.store.minTtl, this.store.constructor.name, this.settings.ttl, 'ttl');
  }

  /**
   * Subscribes to a lock event; returns a function that unsubscribes. Listeners run synchronously, in
   * the async context of the lock operation; what they throw (or reject with) is logged and never reaches
   * the operation. Each lease ends with exactly one `released` or `lost`; each `contended` is followed
   * by one `waited` (unless the store fails: `store-error`). A grant that came back after its validity is
   * a `late-grant`, released unused: it never becomes an `acquired` lease.
   * @example
   * ```ts
   * const off = locks.on('lost', ({ key, reason }) => metrics.alert(`lock ${key} lost: ${reason}`));
   * ```
   */
  on<E extends LockEventName>(event: E, listener: LockEventListener<E>): () => void {
    return this.events.on(event, listener);
  }

  /**
   * The module-wide defaults with `options` applied and checked, a ttl against the store too (once per
   * `@WithLock` method, whose settings `runLocked` then takes).
   * @param scope where the options come from, for messages (e.g. `@WithLock(Job.run)`)
   * @internal
   */
  resolve(options?: LockOptions, scope = ''): LockSettings {
    const settings = resolveSettings(this.settings, options, scope);
    if (settings.ttl !== this.settings.ttl) {
      checkTtlForStore(this.store, settings.ttl, this.leases.drift(settings.ttl), scope ? `${scope}.ttl` : 'ttl');
    }
    return settings;
  }

  /**
   * Acquires `key`, waiting up to `options.wait` ms while another owner holds it. A grant that comes back
   * after its validity (sent + ttl − drift) is released and asked for again within the wait.
   * @throws LockNotAcquiredError when it is still held after the wait
   * @throws LockStoreError when the store fails, or its last grant came back too late; LockKeyError for a bad key
   * @throws LockConfigurationError for a `limit` or `mode` on a store without permits, or one that disagrees
   *   with the shape the key is in use with
   */
  acquire(key: string, options?: LockOptions): Promise<Lock> {
    // not async (one promise less per lease): a bad option is a rejection all the same
    let settings: LockSettings;
    try {
      settings = this.settingsOf(options, 'acquire');
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.acquireWith(key, settings);
  }

  /** Acquires with settings already resolved; a refusal is a `LockNotAcquiredError` that says when to retry. */
  private async acquireWith(key: string, settings: LockSettings): Promise<Lock> {
    const started = performance.now();
    const attempt = await this.acquirerFor(settings).acquire(this.checkedKey(key, settings), settings);
    if ('lock' in attempt) return attempt.lock;
    const error = withKeyTemplate(
      new LockNotAcquiredError(key, attempt.remainingTtl, performance.now() - started),
      settings.metricKey,
    );
    error.retryAfter = retryAfterSeconds(error, settings.retryAfter, this.holdTimes, this.logger);
    throw error;
  }

  /**
   * Tries once, without waiting.
   * @returns the lock, or `null` when someone else holds it
   * @throws LockStoreError when the store fails
   */
  async tryAcquire(key: string, options?: Omit<LockOptions, 'wait'>): Promise<Lock | null> {
    const settings = { ...this.settingsOf(options, 'tryAcquire'), wait: 0 };
    const attempt = await this.acquirerFor(settings).acquire(this.checkedKey(key, settings), settings);
    return 'lock' in attempt ? attempt.lock : null;
  }

  /**
   * The acquirer of a mutex lease, or of a permit when the settings ask for a `limit` or `mode`.
   * @throws LockConfigurationError when they do and the store keeps no permits
   */
  private acquirerFor(settings: LockSettings): Acquirer {
    if (!settings.shape) return this.acquirer;
    const { observer, shutdown, holdTimes } = this;
    this.permits ??= new PermitEngine(this.store, settings.shape, { observer, shutdown, holdTimes });
    return this.permits.acquirer;
  }

  /** `key` if it is usable; else a `LockKeyError` that names the key's template, for clients. */
  private checkedKey(key: string, settings: LockSettings): string {
    try {
      return validateKey(key, this.maxKeyLength);
    } catch (error) {
      throw isLockError(error) ? withKeyTemplate(error, settings.metricKey) : error;
    }
  }

  /**
   * Runs `fn` while holding `key` (or every key of an array, taken in a stable order, all or none),
   * renewing the leases while it runs and releasing them after, whatever `fn` does. A key this async
   * flow already holds (a nested call) is not taken again, while its lease lasts. `fn` starts only while
   * every lease is valid: a set whose first lease ended while the last was taken is taken again.
   * @throws LockNotAcquiredError when a key stays held past the wait; the error `fn` threw, untouched
   * @throws LockStoreError when the store fails, or is too slow for the ttl to start `fn` on valid leases
   */
  async using<T>(key: string, fn: (lock: Lock) => T | Promise<T>, options?: LockOptions): Promise<T>;
  async using<T>(keys: readonly string[], fn: (locks: Lock[]) => T | Promise<T>, options?: LockOptions): Promise<T>;
  async using<T>(
    keyOrKeys: string | readonly string[],
    fn: ((lock: Lock) => T | Promise<T>) | ((locks: Lock[]) => T | Promise<T>),
    options?: LockOptions,
  ): Promise<T> {
    const settings = this.settingsOf(options, 'using');
    const many = Array.isArray(keyOrKeys);
    const keys = many ? (keyOrKeys as readonly string[]) : [keyOrKeys as string];
    return this.runLocked(keys, settings, (locks) =>
      (fn as (value: unknown) => T | Promise<T>)(many ? locks : locks[0]),
    );
  }

  /**
   * Runs `fn` in a locked scope of `keys` with settings already resolved (once, by `@WithLock`).
   * @internal
   */
  async runLocked<T, C = never>(
    keys: readonly string[],
    settings: LockSettings,
    fn: (locks: Lock[]) => T | Promise<T>,
    scope: LockedScopeOptions<C> = {},
  ): Promise<T | C> {
    const started = performance.now();
    let acquired;
    try {
      acquired = await takeScope(
        { keys: keys.length === 1 ? keys : [...new Set(keys)], settings, keyTemplateOf: scope.keyTemplateOf },
        this.scopeHost,
      );
    } catch (error) {
      if (scope.onContention && error instanceof LockNotAcquiredError) return scope.onContention(error);
      throw error;
    }
    const { locks, taken } = acquired;
    try {
      return await runWithLocks(this, locks, () => fn(locks));
    } finally {
      await this.releaseAll(taken, this.keepFor(scope, started));
    }
  }

  /**
   * How long a scope's leases stay after it (`undefined`: released at once): until its `keepUntil`, shortened
   * to what the store surely ends by then, or `holdAtLeast` after it started (`started`, `performance.now()`).
   */
  private keepFor(scope: LockedScopeOptions<unknown>, started: number): number | undefined {
    if (scope.keepUntil) {
      const until = Math.min(Math.floor(scope.keepUntil() - Date.now()), MAX_DURATION);
      const kept = until >= 1 ? (this.store.keepWithin?.(until) ?? until) : 0;
      return kept >= 1 ? kept : undefined;
    }
    const keepFor = (scope.holdAtLeast ?? 0) - (performance.now() - started);
    return keepFor >= 1 ? Math.ceil(keepFor) : undefined;
  }

  /** Reports a call skipped because its lock was busy (a `skipped` event, logged at debug). @internal */
  reportSkip(label: string, error: LockNotAcquiredError, keyTemplate?: string): void {
    this.observer.skipped(label, error, keyTemplate);
  }

  /** Releases locks, never throwing: a failed release only means the lease runs out by its TTL. @internal */
  async releaseAll(locks: readonly Lock[], keepFor?: number): Promise<void> {
    // a failed release was reported (and logged) as a store-error event; the lease ends by its TTL
    const release = (lock: Lock): Promise<boolean> => lock.release(keepFor).catch(() => false);
    // one lock (the usual scope) without a Promise.all around it
    if (locks.length === 1) await release(locks[0]);
    else await Promise.all(locks.map(release));
  }

  /** Whether someone holds `key` right now. */
  async isLocked(key: string): Promise<boolean> {
    return (await this.inspect(key)).held;
  }

  /**
   * What the store knows about `key`: whether it is held, the remaining lease, the last fence, and who
   * holds it (host, pid, label, since when); never the token. For a key used with permits (`limit` or
   * `mode`): also how many hold one (`holders`) and its shape (`limit`, `mode`).
   */
  async inspect(key: string): Promise<LockInfo> {
    const valid = validateKey(key, this.maxKeyLength);
    try {
      const { store } = this;
      const [lease, permits] = await Promise.all([
        store.inspect(valid),
        hasPermits(store) ? store.permits.inspect(valid) : undefined,
      ]);
      return (permits && permitInfo(permits)) ?? toLockInfo(lease);
    } catch (error) {
      this.observer.storeError('inspect', valid, error);
      throw error;
    }
  }

  /**
   * The lock held by the innermost locked scope around the calling code (`using` or a `@WithLock`
   * method), for its `signal` and `fence`; with `key`, the lock this flow holds on that key.
   */
  current(key?: string): Lock | undefined {
    if (key !== undefined) return heldInFlow(this, key);
    return currentFrame()?.innermost.find((lock) => this.leases.holds(lock) || this.permits?.leases.holds(lock));
  }

  /** Number of leases (permits included) this manager holds right now. */
  get heldCount(): number {
    return this.leases.size + (this.permits?.leases.size ?? 0);
  }

  /**
   * Checks that the store can keep locks safely (it answers, may run its scripts, no server of it evicts
   * leases, no Redlock node is given twice) and logs each warning it returns, such as a setting it could not
   * check. `LockService` runs it at bootstrap; call it once at startup when you use a `LockManager` alone.
   * @returns the warnings, as logged
   * @throws LockConfigurationError when a server's settings make locks unsafe
   * @throws LockStoreError when the store does not answer or refuses a command it needs
   */
  async verify(): Promise<readonly string[]> {
    const warnings = (await this.store.verify?.())?.warnings ?? [];
    for (const warning of warnings) this.logger?.warn(warning);
    return warnings;
  }

  /**
   * Shuts down in order: refuses new acquisitions and every waiter (`LockStoreError`, a 503 over HTTP), stops
   * renewals, lets holders inside their section finish for up to `drainTimeout` (never past their lease), ends
   * the leases still held (their signals abort with reason `shutdown`), gives back grants that were in flight,
   * and only then closes the store (unless `closeStore` was false). Safe to call more than once.
   */
  close(): Promise<void> {
    // before anything runs: the releases below must not hand a lease on to a local waiter
    this.shutdown.begin();
    this.closing ??= this.closeInOrder();
    return this.closing;
  }

  /** The steps of `close()`, once. */
  private async closeInOrder(): Promise<void> {
    this.leases.stopRenewals();
    this.permits?.leases.stopRenewals();
    for (const queue of this.queues.values()) queue.wake();
    this.permits?.acquirer.wakeWaiters();
    const deadline = performance.now() + this.drainTimeout;
    await Promise.all([this.leases.drain(deadline), this.permits?.leases.drain(deadline)]);
    // a grant or release that was on its way when the shutdown began is answered before the store closes
    await this.shutdown.answered();
    if (this.closeStore) await this.store.close();
  }

  private settingsOf(options: LockOptions | undefined, call: 'acquire' | 'tryAcquire' | 'using'): LockSettings {
    // the usual call names no options: its settings are made once
    if (options === undefined) return call === 'using' ? this.settings : this.handedOutSettings;
    checkOptionNames(options, call === 'tryAcquire' ? TRY_OPTIONS : CALL_OPTIONS);
    const settings = this.resolve(options);
    // acquire() hands the lease to the caller, who may forget it: it is renewed only when asked
    if (call !== 'using' && options?.autoRenew === undefined) return { ...settings, autoRenew: false };
    return settings;
  }
}
