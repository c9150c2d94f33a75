import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { LockService } from '../lock.service.js';
import { checkLockStore, type LockStoreCheckOptions } from './check-lock-store.js';

/**
 * A `@nestjs/terminus` health indicator for the lock store: `up` with the store, its round-trip time and
 * whether its scripts are loaded; `down` with the reason when the store fails or does not answer within
 * the timeout (1 s by default). Import it from `nestjs-lock/terminus`, and provide it where both
 * `TerminusModule` and `LockService` can be injected.
 *
 * @example
 * ```ts
 * @Controller('health')
 * class HealthController {
 *   constructor(private readonly health: HealthCheckService, private readonly locks: LockHealthIndicator) {}
 *
 *   @Get()
 *   @HealthCheck()
 *   check() {
 *     return this.health.check([() => this.locks.isHealthy('locks', { timeout: 500 })]);
 *   }
 * }
 * ```
 */
@Injectable()
export class LockHealthIndicator {
  constructor(
    private readonly locks: LockService,
    private readonly health: HealthIndicatorService,
  ) {}

  /**
   * Checks the lock store of the application's `LockService`.
   * @param key the name of this indicator in the health report
   */
  async isHealthy<const Key extends string = 'lock'>(
    key: Key = 'lock' as Key,
    options: LockStoreCheckOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const indicator = this.health.check(key);
    const { healthy, ...details } = await checkLockStore(this.locks.store, options);
    return healthy ? indicator.up(details) : indicator.down(details);
  }
}
