import { Module, type Provider } from '@nestjs/common';
import { APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { LockConfigurationError } from './errors/lock-configuration.error.js';
import type { LockModuleOptions } from './interfaces/lock-module-options.interface.js';
import { LeaderExplorer } from './leader.explorer.js';
import { LockExplorer } from './lock.explorer.js';
import { LockInterceptor } from './lock.interceptor.js';
import {
  ASYNC_OPTIONS_TYPE,
  ConfigurableModuleClass,
  LOCK_MODULE_OPTIONS,
  OPTIONS_TYPE,
} from './lock.module-definition.js';
import { checkedOptionsProvider, lockStoreProvider } from './lock-store.provider.js';
import { LOCK_STORE } from './lock.constants.js';
import { LockService } from './lock.service.js';
import { ASYNC_MODULE_OPTIONS } from './lock.module-options.js';
import { checkOptionNames } from './options/option-names.js';
import type { DynamicModule } from '@nestjs/common';

/**
 * Distributed locks for Nest: provides {@link LockService}, serves `@WithLock` methods and campaigns for
 * `@Leader` ones.
 *
 * @example
 * ```ts
 * @Module({ imports: [LockModule.forRoot({ redis: process.env.REDIS_URL, ttl: '30s' })] })
 * export class AppModule {}
 * ```
 */
@Module({
  imports: [DiscoveryModule],
  providers: [checkedOptionsProvider, lockStoreProvider, LockService, LockExplorer, LeaderExplorer],
  exports: [LockService, LOCK_STORE],
})
export class LockModule extends ConfigurableModuleClass {
  /**
   * Configures the module with options known up front; they are checked at bootstrap, before any
   * connection is opened (a `LockConfigurationError` names the first that cannot work).
   */
  static forRoot(options: typeof OPTIONS_TYPE = {}): DynamicModule {
    return withInterceptor(super.forRoot(options), options.interceptor);
  }

  /**
   * Configures the module from a factory, a class or an existing provider (e.g. `ConfigService`); what it
   * returns is checked at bootstrap like the options of `forRoot()`. The interceptor is registered unless
   * the factory's options say `interceptor: false`.
   * @throws LockConfigurationError at once for an unknown name, or without exactly one of `useFactory`,
   *   `useClass` and `useExisting`
   */
  static forRootAsync(options: typeof ASYNC_OPTIONS_TYPE): DynamicModule {
    checkOptionNames(options, ASYNC_MODULE_OPTIONS);
    const sources = (['useFactory', 'useClass', 'useExisting'] as const).filter(
      (name) => options?.[name] !== undefined,
    );
    if (sources.length !== 1) {
      throw new LockConfigurationError(
        sources[1] ?? 'useFactory',
        sources.length === 0 ? undefined : options[sources[1]],
        sources.length === 0
          ? 'forRootAsync() needs one of useFactory, useClass or useExisting to produce the options'
          : `give one of useFactory, useClass or useExisting, not both "${sources[0]}" and "${sources[1]}"`,
      );
    }
    return withInterceptor(super.forRootAsync(options), undefined);
  }
}

function withInterceptor(module: DynamicModule, interceptor: boolean | undefined): DynamicModule {
  const providers: Provider[] = [...(module.providers ?? [])];
  if (interceptor !== false) {
    providers.push({
      provide: APP_INTERCEPTOR,
      inject: [LOCK_MODULE_OPTIONS, LockInterceptor],
      useFactory: (options: LockModuleOptions, lockInterceptor: LockInterceptor) =>
        options?.interceptor === false ? passThrough : lockInterceptor,
    });
    providers.push(LockInterceptor);
  }
  return { ...module, providers };
}

const passThrough = { intercept: (_context: unknown, next: { handle: () => unknown }) => next.handle() };
