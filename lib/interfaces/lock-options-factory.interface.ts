import type { LockModuleOptions } from './lock-module-options.interface.js';

/**
 * A provider that makes the module's options, for `LockModule.forRootAsync({ useClass })` or `useExisting`:
 *
 * ```ts
 * @Injectable()
 * class LockConfig implements LockOptionsFactory {
 *   constructor(private readonly config: ConfigService) {}
 *   createLockOptions(): LockModuleOptions {
 *     return { redis: this.config.getOrThrow('REDIS_URL') };
 *   }
 * }
 * ```
 */
export interface LockOptionsFactory {
  /** The module's options, checked as `forRoot`'s are; may be a promise (a secret read at startup). */
  createLockOptions(): LockModuleOptions | Promise<LockModuleOptions>;
}
