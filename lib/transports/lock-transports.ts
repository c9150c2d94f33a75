import type { ExecutionContext } from '@nestjs/common';
import type { HandlerSources } from '../keys/key-sources.js';
import { graphQLTransport, type GraphQLErrorMapping } from './graphql.transport.js';
import { httpTransport, type HttpErrorMapping } from './http.transport.js';
import type { LockTransport, TransportHandler } from './lock-transport.interface.js';
import { queueTransport, type JobErrorMapping } from './queue.transport.js';
import { rpcTransport, type RpcErrorMapping } from './rpc.transport.js';
import { webSocketTransport, type WsErrorMapping } from './ws.transport.js';

/** Everything the transports' mappings call back into: the overridable methods of the application's `LockInterceptor`. */
export type LockErrorMappings = HttpErrorMapping &
  GraphQLErrorMapping &
  WsErrorMapping &
  RpcErrorMapping &
  JobErrorMapping;

/**
 * Every transport `@WithLock` and `LockInterceptor` know, in the order they are asked: the first that serves a
 * call, describes a handler or recognises an unserved one is that call's or handler's transport.
 */
export const LOCK_TRANSPORTS: readonly LockTransport<LockErrorMappings>[] = [
  httpTransport,
  graphQLTransport,
  webSocketTransport,
  rpcTransport,
  queueTransport,
];

/** The transport of a call a `LockInterceptor` intercepts, if it is one of a transport it knows. */
export function transportServing(context: ExecutionContext): LockTransport<LockErrorMappings> | undefined {
  return LOCK_TRANSPORTS.find((transport) => transport.serves?.(context));
}

/**
 * What `handler` offers key templates besides its arguments, by its transport; `undefined` for a method that
 * serves no request (a provider method, a job, a microservice handler).
 */
export function handlerSourcesOf(handler: TransportHandler): HandlerSources | undefined {
  for (const transport of LOCK_TRANSPORTS) {
    const sources = transport.handlerSources?.(handler);
    if (sources) return sources;
  }
  return undefined;
}
