import { performance } from 'node:perf_hooks';
import { isLockError } from '../errors/lock.error.js';
import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import type { LockLogger, LockOptions, LockSectionOptions } from '../interfaces/lock-options.interface.js';
import type { LockInfo } from '../interfaces/lock-info.interface.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import type { LockManagerOptions } from '../interfaces/lock-manager-options.interface.js';
import { Acquirer, type Outcome } from './waiting/acquirer.js';
import { HoldTimes } from './hold-times.js';
import { LeaseBook } from './lease-book.js';
import { LocalQueue } from './waiting/local-queue.js';
import { PermitEngine, permitInfo } from './permits/permit-engine.js';
import { logLockEvents } from './events/lock-event-logger.js';
import { LockEvents, type LockEventListener, type LockEventMap, type LockEventName } from './events/lock-events.js';
import { LockObserver } from './events/lock-observer.js';
import { currentFrame, heldInFlow, runWithLocks } from './lock-context.js';
import type { Lock } from './lock.js';
import { takeScope, type LockedScopeOptions, type ScopeHost } from './locked-scope.js';
import { retryAfterSeconds } from './retry-after.js';
import { ShutdownGate } from './shutdown-gate.js';
import { StoreCheck } from './store-check.js';
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
import { SettingsMemo } from '../options/settings-memo.js';
import { MAX_DURATION } from '../utils/duration.js';
import { toMilliseconds } from '../options/duration-option.js';
import { printable } from '../utils/printable.js';
import { toLockInfo } from './lock-holder.js';
import { Leaderships } from '../leadership/leaderships.js';
import type { Leadership } from '../leadership/leadership.js';
import type { LeadershipHandle } from '../leadership/leadership-handle.js';
import type { LeadershipOptions } from '../leadership/leadership-options.js';
import type { LeaderInfo } from '../leadership/leader-info.js';
import type { IdempotencyOptions } from '../interfaces/idempotent-options.interface.js';
import { idempotentCall } from '../idempotency/idempotent-call.js';
import {
  runIdempotent,
  type IdempotencyHost,
  type IdempotentAnswer,
  type IdempotentWork,
} from '../idempotency/idempotent-run.js';
import {
  CALL_OPTIONS,
  checkOptionNames,
  MANAGER_OPTIONS,
  TRY_OPTIONS,
  USING_OPTIONS,
  type OptionsKind,
} from '../options/option-names.js';
import {
  validateBoolean,
  validateKey,
  validateLogger,
  validateMaxKeyLength,
  validateOptionsObject,
  validateStore,
} from '../options/validate-options.js';

export type { LockManagerOptions } from '../interfaces/lock-manager-options.interface.js';

/** The option names each direct call takes. */
const OPTIONS_OF: Readonly<Record<'acquire' | 'tryAcquire' | 'using', OptionsKind>> = {
  acquire: CALL_OPTIONS,
  tryAcquire: TRY_OPTIONS,
  using: USING_OPTIONS,
};

/** How long `close()` waits for holders to finish by default, in ms. */
export const DEFAULT_DRAIN_TIMEOUT = 5000;

/**
 * How long, in ms, the shutdown waits after its drain for the holders it asked to stop (their signal aborted)
 * to let their leases go, before it goes on: a job that honours its signal releases its lease before the
 * process exits.
 */
export const STOP_GRACE = 1000;

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
  private readonly storeCheck: StoreCheck;
  /** The campaigns of `lead()`, one per leadership name. */
  private readonly leaderships: Leaderships;
  /** Semaphores and readers-writer locks, from the first call that asks for a `limit` or `mode`. */
  private permits?: PermitEngine;
  private closing?: Promise<void>;
  /** The settings last resolved per kind of call, for the next call that writes the same options again. */
  private readonly settingsMemos = {
    acquire: new SettingsMemo(),
    tryAcquire: new SettingsMemo(),
    using: new SettingsMemo(),
  };
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
    const showKeys = validateBoolean('exposeResolvedKeys', options.exposeResolvedKeys ?? false);
    this.events = new LockEvents(this.logger);
    this.observer = new LockObserver(this.events, showKeys);
    if (this.logger) logLockEvents(this.events, this.logger, showKeys);
    this.shutdown = new ShutdownGate(this.store);
    const { store, observer, queues, shutdown, holdTimes } = this;
    this.leases = new LeaseBook({ store, observer, queues, shutdown, holdTimes });
    this.acquirer = new Acquirer({ store, observer, leases: this.leases, queues, shutdown });
    const verifies =
      validateBoolean('verifyOnFirstUse', options.verifyOnFirstUse ?? true) && typeof store.verify === 'function';
    this.storeCheck = new StoreCheck(() => this.checkStore(), verifies, shutdown);
    this.leaderships = new Leaderships({
      logger: this.logger,
      acquire: (key, lockOptions) => this.acquire(key, lockOptions),
      emit: (event, payload) => this.events.emit(event, payload as LockEventMap[typeof event]),
      inspect: (key) => this.inspect(key),
      leaseTtl: (ttl, scope) => (ttl === undefined ? this.settings.ttl : this.resolve({ ttl }, scope).ttl),
      get closing() {
        return shutdown.begun;
      },
    });
    checkDriftAllowance(this.settings.ttl, this.leases.drift(this.settings.ttl), 'ttl');
    const limits = this.store.capabilities?.limits;
    checkHandoffWindow(limits?.handoffWindow, this.settings.ttl, 'handoffWindow');
    checkStoreMinimum(limits?.minTtl, this.store.constructor.name, this.settings.ttl, 'ttl');
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
  resolve(options?: LockSectionOptions, scope = ''): LockSettings {
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
   *   with the shape the key is in use with; or the refusal of the store's check before the first grant
   *   (see `verify()`), as every acquisition throws it
   */
  acquire(key: string, options?: LockOptions): Promise<Lock> {
    // not async (one promise less per lease): a bad option is a rejection all the same
    let settings: LockSettings;
    try {
      settings = this.settingsOf(options, 'acquire');
    } catch (error) {
      return Promise.reject(error);
    }
    return this.acquireWith(key, settings);
  }

  /** Acquires with settings already resolved; a refusal is a `LockNotAcquiredError` that says when to retry. */
  private async acquireWith(key: string, settings: LockSettings): Promise<Lock> {
    const started = performance.now();
    let attempt: Outcome;
    try {
      const checked = validateKey(key, this.maxKeyLength);
      const acquirer = this.acquirerFor(settings);
      if (!this.storeCheck.passed) await this.storeCheck.beforeGrant();
      attempt = await acquirer.acquire(checked, settings);
    } catch (error) {
      throw this.named(error, settings);
    }
    if ('lock' in attempt) return attempt.lock;
    const error = this.observer.name(
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
    try {
      const checked = validateKey(key, this.maxKeyLength);
      const acquirer = this.acquirerFor(settings);
      if (!this.storeCheck.passed) await this.storeCheck.beforeGrant();
      const attempt = await acquirer.acquire(checked, settings);
      return 'lock' in attempt ? attempt.lock : null;
    } catch (error) {
      throw this.named(error, settings);
    }
  }

  /** `error`, a lock error naming its resource as this manager's messages do (by the key template of `settings`). */
  private named(error: unknown, settings?: LockSettings): unknown {
    return isLockError(error) ? this.observer.name(error, settings?.metricKey) : error;
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

  /**
   * Runs `fn` while holding `key` (or every key of an array, taken in a stable order, all or none),
   * renewing the leases while it runs and releasing them after, whatever `fn` does. A key this async
   * flow already holds (a nested call) is not taken again, while its lease lasts. `fn` starts only while
   * every lease is valid: a set whose first lease ended while the last was taken is taken again.
   * @throws LockNotAcquiredError when a key stays held past the wait; the error `fn` threw, untouched
   * @throws LockStoreError when the store fails, or is too slow for the ttl to start `fn` on valid leases
   * @throws LockLostError with `onLost: 'throw'`, instead of what `fn` returned, when a lease was lost while it ran
   */
  async using<T>(key: string, fn: (lock: Lock) => T | Promise<T>, options?: LockSectionOptions): Promise<T>;
  async using<T>(
    keys: readonly string[],
    fn: (locks: Lock[]) => T | Promise<T>,
    options?: LockSectionOptions,
  ): Promise<T>;
  async using<T>(
    keyOrKeys: string | readonly string[],
    fn: ((lock: Lock) => T | Promise<T>) | ((locks: Lock[]) => T | Promise<T>),
    options?: LockSectionOptions,
  ): Promise<T> {
    const settings = this.settingsOf(options, 'using');
    const many = Array.isArray(keyOrKeys);
    const keys = many ? (keyOrKeys as readonly string[]) : [keyOrKeys as string];
    return this.runLocked(keys, settings, (locks) =>
      (fn as (value: unknown) => T | Promise<T>)(many ? locks : locks[0]),
    );
  }

  /**
   * Runs `fn` in a locked scope of `keys` with settings already resolved (once, by `@WithLock`); with
   * `onLost: 'throw'`, a lease of the scope lost by the time `fn` returned and its leases were released
   * turns the result into that `LockLostError`.
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
      throw this.named(error);
    }
    const { locks, taken } = acquired;
    let result: T;
    try {
      result = await runWithLocks(this, locks, () => fn(locks));
    } finally {
      await this.releaseAll(taken, this.keepFor(scope, started));
    }
    // after the release, which finds a loss no renewal had seen yet (the store no longer had the lease)
    const lost = settings.onLost === 'throw' ? locks.find((lock) => lock.loss)?.loss : undefined;
    if (lost) throw lost;
    return result;
  }

  /**
   * How long a scope's leases stay after it (`undefined`: released at once): until its `keepUntil`, shortened
   * to what the store surely ends by then, or `holdAtLeast` after it started (`started`, `performance.now()`).
   */
  private keepFor(scope: LockedScopeOptions<unknown>, started: number): number | undefined {
    if (scope.keepUntil) {
      const until = Math.min(Math.floor(scope.keepUntil() - Date.now()), MAX_DURATION);
      const kept = until >= 1 ? (this.store.capabilities?.limits?.keepWithin?.(until) ?? until) : 0;
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
    let valid: string;
    try {
      valid = validateKey(key, this.maxKeyLength);
    } catch (error) {
      throw this.named(error);
    }
    try {
      const { store } = this;
      const [lease, permits] = await Promise.all([store.inspect(valid), store.capabilities?.permits?.inspect(valid)]);
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

  /**
   * Campaigns for the leadership `name` until stopped or closed: while this instance leads, runs `fn` with the
   * term (`term`, which grows from one leader to the next, and `signal`, which aborts the moment the term
   * ends). When `fn` returns or throws (a throw is logged), the instance resigns, waits `backoff` and campaigns
   * again; a lost lease aborts the signal and, once `fn` has returned, the campaign goes on. The leader's lease
   * is `leader:<name>`, fenced and renewed; a crashed leader is replaced within about its ttl. `close()`
   * resigns every campaign first.
   * @returns the campaign's handle: `isLeader`, `term`, `stop()` (resigns, so another instance leads at once)
   * @throws LockConfigurationError for a bad name or option, a ttl the store cannot grant, or a name this
   *   manager already campaigns for
   * @throws LockStoreError once `close()` was called
   * @example
   * ```ts
   * locks.lead('outbox-relay', async ({ term, signal }) => {
   *   while (!signal.aborted) await relay.publishPending({ term, signal });
   * });
   * ```
   */
  lead(name: string, fn: (leadership: Leadership) => unknown, options?: LeadershipOptions): LeadershipHandle {
    return this.leaderships.lead(name, fn, options);
  }

  /** Whether this instance leads `name` right now (its campaign holds a term whose lease is valid). */
  isLeader(name: string): boolean {
    return this.leaderships.isLeader(name);
  }

  /**
   * Who leads `name`, as the store tells it, whichever instance it is: the leader's process, its term and how
   * long its lease lasts.
   * @throws LockStoreError when the store fails
   */
  inspectLeader(name: string): Promise<LeaderInfo> {
    return this.leaderships.inspect(name);
  }

  /**
   * Runs `fn` once per idempotency `key` (within `options.scope`), for a queue consumer, an RPC handler or any
   * code that may see the same operation twice: the first call claims the key with a lock (renewed while `fn`
   * runs; a process that dies frees it after the lock's ttl), runs `fn` and keeps its result, as JSON, for
   * `options.ttl` (24 h); a later call with the key resolves to that result without running `fn`. A call while
   * the first runs waits up to `options.wait`, else `LockNotAcquiredError`. When `fn` throws nothing is kept,
   * so a retry runs it again. Kept in the store's `capabilities.records` under a SHA-256 of scope and key.
   * For HTTP handlers, see `@Idempotent()`.
   * @throws IdempotencyKeyReusedError when the key was first used with another `options.fingerprint`
   * @throws LockNotAcquiredError while the first call with the key runs, past `options.wait`
   * @throws LockConfigurationError for a bad option, a store that keeps no records (naming it and why), or a
   *   result bigger than `options.maxBodyBytes` (it ran, and was not kept)
   * @throws LockStoreError when the store fails; the error `fn` threw, untouched
   * @example
   * ```ts
   * await locks.idempotent(`payment:${message.id}`, () => payments.capture(message.orderId));
   * ```
   */
  idempotent<T>(key: string, fn: () => T | Promise<T>, options?: IdempotencyOptions): Promise<T> {
    return idempotentCall(this.idempotencyHost, key, fn, options);
  }

  /** Runs one idempotent operation described by an entry point (`@Idempotent()`). @internal */
  runIdempotent<T>(work: IdempotentWork<T>): Promise<IdempotentAnswer<T>> {
    return runIdempotent(this.idempotencyHost, work);
  }

  /** What idempotent runs use of this manager. */
  private get idempotencyHost(): IdempotencyHost {
    return {
      store: this.store,
      logger: this.logger,
      using: (key, fn, options) => this.using(key, fn, options),
    };
  }

  /** Number of leases (permits included) this manager holds right now. */
  get heldCount(): number {
    return this.leases.size + (this.permits?.leases.size ?? 0);
  }

  /**
   * Checks that the store can keep locks safely (it answers, may run its scripts, no server of it evicts
   * leases, no Redlock node is given twice) and logs each warning it returns, such as a setting it could not
   * check. `LockService` runs it at bootstrap, and a manager runs it before its first acquisition (see
   * `verifyOnFirstUse`); call it to check at startup instead, or again. Its outcome is what acquisitions go by:
   * a pass lets them through unchecked, a `LockConfigurationError` refuses them until a later call passes.
   * @returns the warnings, as logged
   * @throws LockConfigurationError when a server's settings make locks unsafe
   * @throws LockStoreError when the store does not answer or refuses a command it needs
   */
  verify(): Promise<readonly string[]> {
    return this.storeCheck.run();
  }

  /** The store's own check, its warnings logged. */
  private async checkStore(): Promise<readonly string[]> {
    const warnings = (await this.store.verify?.())?.warnings ?? [];
    for (const warning of warnings) this.logger?.warn(warning);
    return warnings;
  }

  /**
   * Shuts down in order: resigns every leadership (see `lead`), refuses new acquisitions and every waiter (`LockStoreError`, a 503 over HTTP), lets
   * holders finish for up to `drainTimeout` while their leases are still renewed, and gives back grants that
   * were in flight. A lease its holder has not let go by then is never ended: its signal aborts with reason
   * `shutdown`, a warning names its template, its holder gets up to 1 s more to stop, and it
   * stays held (and renewed, if it was) until its holder
   * releases it or the process exits, as after a crash. `close()` resolves then; the store (unless
   * `closeStore` is false) is closed once the last lease has ended, at once when none outlived the drain,
   * else in the background (a failure to close it is logged). Safe to call more than once.
   */
  close(): Promise<void> {
    // before anything runs: the releases below must not hand a lease on to a local waiter
    this.shutdown.begin();
    // each leader's signal aborts now; its lease is released once its function returns, within the drain
    void this.leaderships.resignAll();
    this.closing ??= this.closeInOrder();
    return this.closing;
  }

  /** The steps of `close()`, once. */
  private async closeInOrder(): Promise<void> {
    for (const queue of this.queues.values()) queue.wake();
    this.permits?.acquirer.wakeWaiters();
    await Promise.all([this.leases.drain(this.drainTimeout), this.permits?.leases.drain(this.drainTimeout)]);
    // the holders just asked to stop get a moment to let go: nothing waits for a scheduled job as the HTTP
    // server waits for its requests, and Nest ends the process right after the shutdown hooks
    if (this.heldCount > 0) {
      const until = performance.now() + STOP_GRACE;
      await Promise.all([this.leases.emptied(until), this.permits?.leases.emptied(until)]);
    }
    if (this.heldCount === 0) return this.closeStoreWhenIdle();
    // only a logger that throws gets here: nothing may reject unheard
    this.closeStoreAfterLastLease().catch(() => undefined);
  }

  /** Closes the store once the leases that outlived the drain have ended; a failure is logged. */
  private async closeStoreAfterLastLease(): Promise<void> {
    try {
      await Promise.all([this.leases.emptied(), this.permits?.leases.emptied()]);
      await this.closeStoreWhenIdle();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.logger?.error(
        printable(`Closing the lock store after the last lease of the shutdown ended failed: ${reason}`),
      );
    }
  }

  /** Closes the store (if ours to close) once every call on its way is answered. */
  private async closeStoreWhenIdle(): Promise<void> {
    // a grant or release that was on its way when the shutdown began is answered before the store closes
    await this.shutdown.answered();
    this.leases.stopRenewals();
    this.permits?.leases.stopRenewals();
    if (this.closeStore) await this.store.close();
  }

  private settingsOf(options: LockSectionOptions | undefined, call: 'acquire' | 'tryAcquire' | 'using'): LockSettings {
    // the usual call names no options: its settings are made once
    if (options === undefined) return call === 'using' ? this.settings : this.handedOutSettings;
    const memo = this.settingsMemos[call];
    const known = typeof options === 'object' && options !== null ? memo.get(options) : undefined;
    if (known) return known;
    checkOptionNames(options, OPTIONS_OF[call]);
    let settings = this.resolve(options);
    // acquire() hands the lease to the caller, who may forget it: it is renewed only when asked
    if (call !== 'using' && options?.autoRenew === undefined) settings = { ...settings, autoRenew: false };
    memo.set(options, settings);
    return settings;
  }
}
