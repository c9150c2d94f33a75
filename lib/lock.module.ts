import { Module, type Provider } from '@nestjs/common';
import { APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import type { LockModuleOptions } from './interfaces/lock-module-options.interface.js';
import { LockExplorer } from './lock.explorer.js';
import { LockInterceptor } from './lock.interceptor.js';
import {
  ASYNC_OPTIONS_TYPE,
  ConfigurableModuleClass,
  LOCK_MODULE_OPTIONS,
  OPTIONS_TYPE,
} from './lock.module-definition.js';
import { LockService } from './lock.service.js';
import type { DynamicModule } from '@nestjs/common';

/**
 * Distributed locks for Nest: provides {@link LockService} and serves `@WithLock` methods.
 *
 * @example
 * ```ts
 * @Module({ imports: [LockModule.forRoot({ redis: process.env.REDIS_URL, ttl: '30s' })] })
 * export class AppModule {}
 * ```
 */
@Module({
  imports: [DiscoveryModule],
  providers: [LockService, LockExplorer],
  exports: [LockService],
})
export class LockModule extends ConfigurableModuleClass {
  /** Configures the module with options known up front. */
  static forRoot(options: typeof OPTIONS_TYPE = {}): DynamicModule {
    return withInterceptor(super.forRoot(options), options.interceptor);
  }

  /**
   * Configures the module from a factory, a class or an existing provider (e.g. `ConfigService`).
   * The interceptor is registered unless the factory's options say `interceptor: false`.
   */
  static forRootAsync(options: typeof ASYNC_OPTIONS_TYPE): DynamicModule {
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
