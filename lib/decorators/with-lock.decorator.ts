import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LockNotReadyError } from '../errors/lock-not-ready.error.js';
import type { LockOptions } from '../interfaces/lock-options.interface.js';
import { WITH_LOCK_METADATA } from '../lock.constants.js';
import { serviceFor } from '../lock-registry.js';
import { copyMethodIdentity } from '../utils/copy-metadata.js';
import { toMilliseconds, type Duration } from '../utils/duration.js';
import { DEFAULT_SETTINGS, resolveSettings } from '../utils/lock-settings.js';
import { LockedMethod, type LockKeySpec } from '../locked-method.js';
import { parameterNames } from '../utils/parameter-names.js';

/** Options of `@WithLock`: the lock options plus what to do on contention and how long to hold. */
export interface WithLockOptions extends LockOptions {
  /**
   * What a call does when the lock stays held past `wait`: `'throw'` a `LockNotAcquiredError` (409 on
   * HTTP), or `'skip'` the call and resolve `undefined` (for scheduled jobs). @default 'throw'
   */
  readonly onContention?: 'throw' | 'skip';
  /**
   * Keep the lease at least this long after the call started, even if it finished sooner (token-checked
   * expiry instead of delete), so instances whose clocks differ a little do not each run a job.
   */
  readonly holdAtLeast?: Duration;
}

/**
 * Runs the method under a distributed lock: acquires the key(s), renews the lease while the method runs,
 * and releases it after, whatever the method does. Works on controller handlers (a conflict becomes
 * `409 Conflict`), `@Cron`/`@Interval` jobs, microservice handlers and plain provider methods, in any
 * order with other decorators. The decorated method always returns a Promise.
 *
 * @param key a template like `'inventory:<productId>'` (route param, query or body field, parameter
 *   name, argument index, dotted path), an array of them (taken all or none), or a function of the
 *   method's arguments returning the key(s)
 * @throws LockConfigurationError at decoration time for malformed templates or options
 * @example
 * ```ts
 * @Post(':productId/purchase')
 * @WithLock('inventory:<productId>', { wait: '2s' })
 * purchase(@Param('productId') productId: string) { ... }
 * ```
 */
export function WithLock(key: LockKeySpec, options: WithLockOptions = {}): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const original = descriptor.value as unknown;
    const label = `${(target as { constructor?: { name?: string } }).constructor?.name ?? 'anonymous'}.${String(propertyKey)}`;
    if (typeof original !== 'function') {
      throw new LockConfigurationError('@WithLock', label, 'expected it on a method');
    }
    if (Reflect.getOwnMetadata?.(WITH_LOCK_METADATA, original)) {
      throw new LockConfigurationError(
        '@WithLock',
        label,
        'it is applied twice; give one @WithLock an array of keys instead',
      );
    }
    const { onContention = 'throw', holdAtLeast, ...lockOptions } = options;
    if (onContention !== 'throw' && onContention !== 'skip') {
      throw new LockConfigurationError(`@WithLock(${label}).onContention`, onContention, "expected 'throw' or 'skip'");
    }
    // validate now, so a bad option fails when the class loads; module defaults are merged at first call
    resolveSettings(DEFAULT_SETTINGS, lockOptions, `@WithLock(${label})`);
    const locked = new LockedMethod({
      label,
      declaringClass: (target as { constructor: object }).constructor,
      methodName: propertyKey,
      key,
      options: lockOptions,
      onContention,
      holdAtLeast: holdAtLeast === undefined ? 0 : toMilliseconds(holdAtLeast, `@WithLock(${label}).holdAtLeast`),
      parameterNames: parameterNames(original as () => unknown),
      arity: (original as () => unknown).length,
    });
    const method = original as (...args: unknown[]) => unknown;
    const wrapper = function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const service = serviceFor(this);
      if (!service) return Promise.reject(new LockNotReadyError(label));
      // the wrapper carries the route metadata of decorators written above this one, added after it ran
      return locked.invoke(service, this, args, () => method.apply(this, args), wrapper);
    };
    copyMethodIdentity(method, wrapper);
    Reflect.defineMetadata(WITH_LOCK_METADATA, locked, wrapper);
    descriptor.value = wrapper as never;
    return descriptor;
  };
}
