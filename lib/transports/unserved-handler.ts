import type { LockManager } from '../core/lock-manager.js';
import { isLockError } from '../errors/lock.error.js';
import { errorMapperFor, type UnservedTransport } from '../lock-registry.js';
import {
  NEST_GRAPHQL_FIELD_METADATA,
  NEST_GRAPHQL_RESOLVER_METADATA,
  NEST_MESSAGE_MAPPING_METADATA,
  NEST_PATTERN_METADATA,
} from '../lock.constants.js';

/**
 * The transport of a message handler (`@MessagePattern`, `@EventPattern`), a gateway handler
 * (`@SubscribeMessage`) or a resolver (`@Query`, `@Mutation`, `@Subscription`, `@ResolveField`), by the
 * metadata Nest's decorators put on `handler`; `undefined` for any other method (routes, jobs, plain methods).
 */
export function handlerTransport(handler: object): UnservedTransport | undefined {
  const marked = (key: string): boolean => Reflect.getOwnMetadata(key, handler) !== undefined;
  if (marked(NEST_PATTERN_METADATA)) return 'rpc';
  if (marked(NEST_MESSAGE_MAPPING_METADATA)) return 'ws';
  if (marked(NEST_GRAPHQL_RESOLVER_METADATA) || marked(NEST_GRAPHQL_FIELD_METADATA)) return 'graphql';
  return undefined;
}

/**
 * What a `@WithLock` handler of `transport` ends with when no `LockInterceptor` served its call, as Nest
 * leaves some: a microservice connected with `connectMicroservice()` without `inheritAppConfig`, a gateway on
 * NestJS 11, a `@ResolveField` without `fieldResolverEnhancers`. A lock error becomes the answer of the
 * application's `LockInterceptor` (its subclass's, if registered), thrown (RPC, WebSocket) or resolved as the
 * field's value (GraphQL, so that no exception handler logs it); anything else is rethrown untouched, and so is
 * every error of an application without a `LockInterceptor`.
 */
export async function answerUnserved(
  service: LockManager,
  transport: UnservedTransport,
  error: unknown,
): Promise<unknown> {
  const mapper = isLockError(error) ? errorMapperFor(service) : undefined;
  if (!mapper) throw error;
  const answer = await mapper.transportError(transport, error as Error);
  if (transport === 'graphql' && answer !== error) return answer;
  throw answer;
}
