import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LockNotReadyError } from '../errors/lock-not-ready.error.js';
import type { WithLockOptions } from '../interfaces/with-lock-options.interface.js';
import { WITH_LOCK_METADATA } from '../lock.constants.js';
import { errorMappingsFor, serviceFor } from '../lock-registry.js';
import { copyMethodIdentity } from './copy-metadata.js';
import { toMilliseconds } from '../options/duration-option.js';
import { DEFAULT_SETTINGS, resolveSettings } from '../options/lock-settings.js';
import { LockedMethod, type LockKeySpec } from './locked-method.js';
import { checkOptionNames, WITH_LOCK_OPTIONS } from '../options/option-names.js';
import { parameterNames } from '../keys/parameter-names.js';
import { answerUnserved, unservedTransportOf } from '../transports/unserved-handler.js';
import type { LockTransport } from '../transports/lock-transport.interface.js';
import type { LockErrorMappings } from '../transports/lock-transports.js';
import { isServed } from '../core/lock-context.js';

/**
 * Runs the method under a distributed lock: acquires the key(s), renews the lease while the method runs,
 * and releases it after, whatever the method does. Works on controller handlers (a conflict becomes
 * `409 Conflict`), `@Cron`/`@Interval` jobs, microservice handlers and plain provider methods, in any
 * order with other decorators. The decorated method always returns a Promise. On a `@Cron` or `@Interval`
 * method, one instance runs each scheduled tick: the others skip it (see `holdAtLeast`).
 *
 * Each placeholder of a template has one source, so a request cannot choose the key: `<name>` (or
 * `<name.path>`) is the method's argument of that parameter as the method receives it, after pipes, else
 * the route param `:name` of every route of the handler; `<0>` (`<0.path>`) is the argument at that index;
 * `<params.x>`, `<query.x>`, `<body.x>`, `<headers.x>` (lower-case) and `<user.x>` (`request.user`, set by a
 * guard) name a part of the request explicitly. Values are `%XX`-escaped where they contain `%` or the
 * template's separators, so distinct values never share a key (`inventory:42` stays as it is). The rules in
 * full, with the errors each mistake meets: docs/key-templates.md.
 *
 * @param key a template like `'inventory:<productId>'`, an array of them (taken all or none), or a
 *   function of the method's arguments returning the key(s)
 * @throws LockConfigurationError at decoration time for malformed templates (`<a><b>`), bad option values or
 *   unknown option names (with the closest known name), and at bootstrap for a placeholder that could come
 *   from two places or from none, naming class, method and placeholder
 * @example
 * ```ts
 * @Post(':productId/purchase')
 * @WithLock('inventory:<productId>', { wait: '2s' })
 * purchase(@Param('productId', ParseIntPipe) productId: number) { ... }
 *
 * @Post('me/checkout')
 * @UseGuards(AuthGuard('jwt'))
 * @WithLock('cart:<user.id>')
 * checkout(@Body() dto: CheckoutDto) { ... }
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
    if (typeof options !== 'object' || options === null || Array.isArray(options)) {
      throw new LockConfigurationError(`@WithLock(${label})`, options, 'expected an options object');
    }
    checkOptionNames(options, WITH_LOCK_OPTIONS, `@WithLock(${label})`);
    const { onContention, holdAtLeast, ...lockOptions } = options;
    if (onContention !== undefined && onContention !== 'throw' && onContention !== 'skip') {
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
      ...(onContention === undefined ? {} : { onContention }),
      ...(holdAtLeast === undefined
        ? {}
        : { holdAtLeast: toMilliseconds(holdAtLeast, `@WithLock(${label}).holdAtLeast`, { zero: 'allowed' }) }),
      parameterNames: parameterNames(original as () => unknown),
      arity: (original as () => unknown).length,
    });
    const method = original as (...args: unknown[]) => unknown;
    let transport: LockTransport<LockErrorMappings> | false | undefined;
    const wrapper = function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const service = serviceFor(this);
      if (!service) return Promise.reject(new LockNotReadyError(label));
      // the wrapper carries the metadata of decorators written above this one, added after it ran
      transport ??=
        unservedTransportOf({ owner: locked.ownerOf(this), methodName: propertyKey, method: wrapper }) ?? false;
      const unserved = transport && !isServed(locked) ? transport : undefined;
      const call = locked.invoke(service, {
        instance: this,
        args,
        run: () => method.apply(this, args),
        handler: wrapper,
      });
      // no interceptor sees what BullMQ calls, nor some handlers of other transports: their lock errors are mapped here
      if (!unserved) return call;
      return call.catch((error: unknown) => answerUnserved(unserved, error, args, errorMappingsFor(service)));
    };
    copyMethodIdentity(method, wrapper);
    Reflect.defineMetadata(WITH_LOCK_METADATA, locked, wrapper);
    descriptor.value = wrapper as never;
    return descriptor;
  };
}
