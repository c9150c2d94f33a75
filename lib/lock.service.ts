import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { LockModuleOptions } from './interfaces/lock-module-options.interface.js';
import { LockManager } from './lock-manager.js';
import { LOCK_MODULE_OPTIONS } from './lock.module-definition.js';
import { registerService, unregisterService } from './lock-registry.js';
import { createStore } from './utils/create-store.js';
import { validateBoolean } from './utils/validate-options.js';

/**
 * Distributed locks for a Nest application: `acquire`, `tryAcquire`, `using`, `isLocked`, `inspect` and
 * `current` (see {@link LockManager}). Provided by `LockModule`; it checks the store at startup, serves
 * `@WithLock` methods, and on shutdown stops renewals, releases every held lease, then closes what the
 * module created (never a client or store you passed in).
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
  private readonly localOnly: boolean;
  private readonly verifyOnStartup: boolean;

  /** @throws LockConfigurationError when an option is invalid (at bootstrap) */
  constructor(@Inject(LOCK_MODULE_OPTIONS) options: LockModuleOptions) {
    const created = createStore(options ?? {});
    super({
      ...options,
      store: created.store,
      closeStore: created.owned,
      logger: options?.logger ?? new Logger('LockModule'),
    });
    this.localOnly = created.local;
    this.verifyOnStartup = validateBoolean('verifyOnStartup', options?.verifyOnStartup ?? true);
  }

  /** Checks the store and makes the service available to `@WithLock` methods. */
  async onModuleInit(): Promise<void> {
    if (this.localOnly) {
      this.logger?.log?.('No Redis configured: locks are held in this process only (MemoryLockStore).');
    }
    if (this.verifyOnStartup) {
      try {
        await this.store.verify?.();
      } catch (error) {
        // Nest runs no shutdown hooks after a failed bootstrap: close our client now or it retries forever
        await this.close();
        throw error;
      }
    }
    registerService(this);
  }

  /** Releases every held lease before the application's connections close. */
  async beforeApplicationShutdown(): Promise<void> {
    unregisterService(this);
    await this.close();
  }

  /** Closes what the module owns, if `beforeApplicationShutdown` did not already. */
  async onApplicationShutdown(): Promise<void> {
    unregisterService(this);
    await this.close();
  }
}
