import { lastValueFrom } from 'rxjs';
import { isLockError } from '../errors/lock.error.js';
import type { LockTransport, TransportHandler } from './lock-transport.interface.js';
import { LOCK_TRANSPORTS, type LockErrorMappings } from './lock-transports.js';

/**
 * The transport of a handler that Nest may run with no `LockInterceptor` around it: a BullMQ job processor, a
 * message handler (`@MessagePattern`, `@EventPattern`), a gateway handler (`@SubscribeMessage`) or a resolver
 * (`@Query`, `@Mutation`, `@Subscription`, `@ResolveField`); `undefined` for any other method (routes, plain
 * methods).
 */
export function unservedTransportOf(handler: TransportHandler): LockTransport<LockErrorMappings> | undefined {
  return LOCK_TRANSPORTS.find((transport) => transport.mayRunUnserved?.(handler));
}

/**
 * What a `@WithLock` handler of `transport` ends with when no `LockInterceptor` served its call, as Nest leaves
 * some: a job processor always, a microservice connected with `connectMicroservice()` without
 * `inheritAppConfig`, a gateway on NestJS 11, a `@ResolveField` without `fieldResolverEnhancers`. A lock error
 * becomes the answer of the application's `LockInterceptor` (its subclass's, if registered): thrown (RPC,
 * WebSocket, jobs) or resolved as the field's value (GraphQL, so that no exception handler logs it). Anything
 * else is rethrown untouched, and so is every error of an application without a `LockInterceptor`, but a job's.
 * @param args the handler's arguments
 * @param mappings the application's `LockInterceptor`, if it has one
 */
export async function answerUnserved(
  transport: LockTransport<LockErrorMappings>,
  error: unknown,
  args: readonly unknown[],
  mappings: LockErrorMappings | undefined,
): Promise<unknown> {
  if (!isLockError(error)) throw error;
  const call = { args };
  const answer = mappings ? transport.mapError(error, call, mappings) : transport.mapErrorAlone?.(error, call);
  if (!answer) throw error;
  return lastValueFrom(await answer, { defaultValue: undefined });
}
