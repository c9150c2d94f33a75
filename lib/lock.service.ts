import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { findNestEventEmitter, forwardLockEvents } from './core/events/lock-event-forwarder.js';
import { LockManager } from './core/lock-manager.js';
import { LOCK_CHECKED_OPTIONS, isMadeByModule } from './lock-store.provider.js';
import { LOCK_STORE } from './lock.constants.js';
import type { LockStore } from './interfaces/lock-store.interface.js';
import type { CheckedModuleOptions } from './lock.module-options.js';
import { noteStarting, registerService, unregisterService } from './lock-registry.js';
import { attachServiceTelemetry } from './telemetry/service-telemetry.js';
import type { LockTelemetryOptions } from './interfaces/lock-telemetry-options.interface.js';
import type { ForcedRelease, LockList, LockListOptions, LockSummary } from './interfaces/lock-summary.interface.js';
import { describeLock, listLocks } from './listing/lock-listing.js';
import { forceRelease } from './listing/force-release.js';

/**
 * Distributed locks for a Nest application: `acquire`, `tryAcquire`, `using`, `isLocked`, `inspect`,
 * `current`, `on`, and leader election with `lead`, `isLeader` and `inspectLeader` (see {@link LockManager}). Provided by `LockModule`; it checks the store at startup,
 * serves `@WithLock` methods, re-emits lock events as Nest events (`lock.acquired`, ...) when
 * `@nestjs/event-emitter` is set up, records OpenTelemetry metrics and spans when `@opentelemetry/api` is
 * installed and an SDK registered before bootstrap (see {@link LockTelemetry}), and on shutdown drains (see {@link LockManager.close}): sections may
 * finish for `drainTimeout`, a lease whose section still runs is kept until it ends, and what the module
 * created (never a client or store you passed in) is closed after the last lease.
 *
 * @example
 * ```ts
 * constructor(private readonly locks: LockService) {}
 *
 * transfer(from: string, to: string) {
 *   return this.locks.using([`account:${from}`, `account:${to}`], async () => { ... });
 * }
 * ```
 */
@Injectable()
export class LockService extends LockManager implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly storeWarning?: string;
  private readonly verifyOnStartup: boolean;
  private readonly telemetry: LockTelemetryOptions | false;
  private readonly detach: Array<() => void> = [];
  private readonly exposeResolvedKeys: boolean;

  /**
   * @param options the module options, checked at bootstrap
   * @param store the store under {@link LOCK_STORE}: built from the options, or the one a test put there
   */
  constructor(
    @Inject(LOCK_CHECKED_OPTIONS) options: CheckedModuleOptions,
    @Inject(LOCK_STORE) store: LockStore,
    @Optional() private readonly moduleRef?: ModuleRef,
  ) {
    super({
      ...options.defaults,
      store,
      closeStore: isMadeByModule(store),
      drainTimeout: options.drainTimeout,
      exposeResolvedKeys: options.exposeResolvedKeys,
      logger: options.logger ?? new Logger('LockModule'),
      // checked at bootstrap (onModuleInit), which an acquisition made before it waits for; or not at all
      verifyOnFirstUse: options.verifyOnStartup,
    });
    // a store a test put under LOCK_STORE is not the one the warning is about
    if (isMadeByModule(store)) this.storeWarning = options.storeWarning;
    this.verifyOnStartup = options.verifyOnStartup;
    this.telemetry = options.telemetry;
    this.exposeResolvedKeys = options.exposeResolvedKeys;
    noteStarting(this);
  }

  /**
   * The locks held right now in this module's key space, one page at a time (bounded work per call): each
   * key without the module's key prefix, its kind, its holders (label, host, pid, since when, remaining ttl,
   * fence), how many wait, and a semaphore's limit or a readers-writer lock's mode; never a token. For the
   * next page, pass the returned `cursor` back.
   * @throws LockConfigurationError for a `limit` outside 1..1000, a `cursor` no earlier page (under the same
   * `prefix`) returned, or a store that offers no listing
   * @throws LockStoreError when the store fails
   * @example
   * ```ts
   * const { locks } = await this.locks.list({ prefix: 'invoice:' });
   * ```
   */
  list(options?: LockListOptions): Promise<LockList> {
    return listLocks(this.store, options);
  }

  /**
   * What holds `key` right now, as `list` shows each lock; `undefined` while it is free.
   * @throws LockConfigurationError for a store that offers no listing
   * @throws LockStoreError when the store fails
   */
  describe(key: string): Promise<LockSummary | undefined> {
    return describeLock(this.store, key);
  }

  /**
   * Frees a stuck lock whoever holds it: ends every lease and permit of `key` and raises its fence in the same
   * step, so the old holders' fenced writes are refused; each old holder's `signal` aborts with a
   * `LockLostError` of reason `revoked` at its next renewal. Logged as a warning: who (`by`) and which key (its
   * SHA-256 fingerprint unless `exposeResolvedKeys` is on), never a token.
   * @param by who asks, for the log line
   * @throws LockConfigurationError for a store that offers no forced release
   * @throws LockStoreError when the store fails
   */
  forceRelease(key: string, by: string): Promise<ForcedRelease> {
    return forceRelease(this.store, key, { by, logger: this.logger, showKey: this.exposeResolvedKeys });
  }

  /** Checks the store and makes the service available to `@WithLock` methods. */
  async onModuleInit(): Promise<void> {
    if (this.storeWarning) this.logger?.warn(this.storeWarning);
    if (this.verifyOnStartup) {
      try {
        await this.verify();
      } catch (error) {
        // Nest runs no shutdown hooks after a failed bootstrap: close our client now or it retries forever
        unregisterService(this);
        await this.close();
        throw error;
      }
    }
    const emitter = this.moduleRef && (await findNestEventEmitter(this.moduleRef));
    if (emitter) this.detach.push(forwardLockEvents(this, emitter));
    const telemetry = this.telemetry && (await attachServiceTelemetry(this, this.telemetry));
    if (telemetry) this.detach.push(() => telemetry.detach());
    registerService(this);
  }

  /**
   * Drains before Nest closes the application's servers (which wait for requests in flight): resolves once
   * every holder let go, or once the drain asked the rest to stop, whose leases stay held until they do.
   */
  async beforeApplicationShutdown(): Promise<void> {
    unregisterService(this);
    await this.close();
  }

  /**
   * Closes what the module owns, if `beforeApplicationShutdown` did not already; a drain already done is not
   * done again, and a lease kept past it stays held.
   */
  async onApplicationShutdown(): Promise<void> {
    unregisterService(this);
    await this.close();
    for (const detach of this.detach.splice(0)) detach();
  }
}
