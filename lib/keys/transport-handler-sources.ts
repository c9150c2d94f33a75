import type { HandlerSources, RequestSourceName } from './key-sources.js';
import { NEST_GRAPHQL_RESOLVER_METADATA, NEST_MESSAGE_MAPPING_METADATA } from '../lock.constants.js';

const NONE: ReadonlySet<string> = new Set();

/**
 * What a GraphQL resolver or WebSocket message handler offers key templates besides its arguments (which
 * carry its field arguments or message): the request parts its frame has, from the GraphQL context's `req`
 * or the socket's handshake. `undefined` for any other method. HTTP handlers are described by
 * `httpHandlerSources`; a microservice handler's message is its arguments, so it has no frame.
 */
export function transportHandlerSources(handler: object): HandlerSources | undefined {
  if (Reflect.getOwnMetadata(NEST_GRAPHQL_RESOLVER_METADATA, handler) !== undefined)
    return frameOnly('a GraphQL resolver', ['headers', 'user']);
  if (Reflect.getOwnMetadata(NEST_MESSAGE_MAPPING_METADATA, handler) !== undefined)
    return frameOnly('a WebSocket message handler', ['headers', 'query', 'user']);
  return undefined;
}

function frameOnly(kind: string, sources: readonly RequestSourceName[]): HandlerSources {
  return { kind, sources, routes: [], routeParams: NONE, someRouteParams: NONE, parameters: [] };
}
