import { Module, type DynamicModule } from '@nestjs/common';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { AdminLocks } from './admin-locks.js';
import { lockAdminController } from './lock-admin.controller.js';
import type { CheckedAdminOptions, LockAdminOptions } from './lock-admin-options.js';

/**
 * A page and a JSON API to see and steer the application's locks, beside `LockModule` in an HTTP application
 * (Express or Fastify): `GET {path}` a page that lists the held locks and refreshes itself, with hold and wait
 * times per key template; `GET {path}/api/locks` (`prefix`, `limit`, `cursor`), `GET {path}/api/locks/:key`,
 * `GET {path}/api/stats`, and `POST {path}/api/locks/:key/release` (with the header `x-lock-admin: release`;
 * 403 unless `forceRelease: true`). Never shows a token. Put a `guard` in front of it.
 * @example
 * ```ts
 * @Module({
 *   imports: [
 *     LockModule.forRoot({ redis: { url: process.env.REDIS_URL } }),
 *     LockAdminModule.forRoot({ guard: AdminTokenGuard, forceRelease: true }),
 *   ],
 * })
 * export class AppModule {}
 * ```
 */
@Module({})
export class LockAdminModule {
  /** @throws LockConfigurationError for an invalid option */
  static forRoot(options: LockAdminOptions = {}): DynamicModule {
    const checked = checkAdminOptions(options);
    return {
      module: LockAdminModule,
      controllers: [lockAdminController(checked)],
      providers: [AdminLocks],
    };
  }
}

/** The options with their defaults, the path without its outer slashes (as `@Controller` takes it). */
function checkAdminOptions(options: LockAdminOptions): CheckedAdminOptions {
  const path = options.path ?? '/locks';
  if (typeof path !== 'string' || !/^\/?[\w\-./]+$/.test(path)) {
    throw new LockConfigurationError('path', path, "expected a URL path such as '/locks'");
  }
  if (options.guard !== undefined && typeof options.guard !== 'function') {
    throw new LockConfigurationError('guard', options.guard, 'expected a guard class (implements CanActivate)');
  }
  const forceRelease = options.forceRelease ?? false;
  if (typeof forceRelease !== 'boolean') {
    throw new LockConfigurationError('forceRelease', forceRelease, 'expected true or false');
  }
  return {
    path: path.replace(/^\/+|\/+$/g, ''),
    ...(options.guard ? { guard: options.guard } : {}),
    forceRelease,
  };
}
