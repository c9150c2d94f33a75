import { UseInterceptors } from '@nestjs/common';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { IdempotencyInterceptor } from '../idempotency/idempotency.interceptor.js';
import { IdempotentHandler } from '../idempotency/idempotent-handler.js';
import type { IdempotentOptions } from '../interfaces/idempotent-options.interface.js';
import { IDEMPOTENT_METADATA } from '../lock.constants.js';

/**
 * Makes an HTTP handler (Express or Fastify) safe to retry: the first request with an `Idempotency-Key` header
 * runs the handler under a lock on that key and keeps its final response (status, body, content type) for
 * `ttl`; a later request with the key gets that response replayed with `Idempotent-Replayed: true`, without
 * running the handler. A duplicate while the first runs: `409 Conflict` with `Retry-After`. The same key with
 * another method, URL or body: `422`. A response that is a 5xx or a lock or store error is not kept, so a retry
 * runs again; a process that dies mid-handler frees the key after the lock's ttl. Requests without the header
 * run as usual (`required: true`: `400`). Works alone or with `@WithLock`, in any order. Needs a store that keeps
 * records (memory, Redis, Sentinel, Cluster): bootstrap refuses it on another, naming the store and why.
 * Keys are stored as a SHA-256 of scope and key; neither key nor body is ever logged. See docs/idempotency.md.
 *
 * @throws LockConfigurationError at decoration time for a bad option value, an unknown option name (with the
 *   closest known one) or a malformed `scope`; at bootstrap for a handler that is no HTTP route, a `scope`
 *   placeholder the request cannot fill, or a store without records
 * @example
 * ```ts
 * @Post(':productId/purchase')
 * @Idempotent({ scope: '<user.id>' })
 * @WithLock('inventory:<productId>')
 * purchase(@Param('productId', ParseIntPipe) productId: number) { ... }
 * ```
 */
export function Idempotent(options: IdempotentOptions = {}): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const label = `${(target as { constructor?: { name?: string } }).constructor?.name ?? 'anonymous'}.${String(propertyKey)}`;
    const method = descriptor.value as unknown;
    if (typeof method !== 'function') {
      throw new LockConfigurationError('@Idempotent()', label, 'expected it on a method');
    }
    if (Reflect.getOwnMetadata(IDEMPOTENT_METADATA, method)) {
      throw new LockConfigurationError(`@Idempotent(${label})`, label, 'it is applied twice; keep one');
    }
    Reflect.defineMetadata(IDEMPOTENT_METADATA, new IdempotentHandler(label, propertyKey, options), method);
    UseInterceptors(IdempotencyInterceptor)(target, propertyKey, descriptor);
    return descriptor;
  };
}
