import type { ExecutionContext } from '@nestjs/common';
import type { RequestFrame } from '../keys/key-sources.js';

interface HttpRequestLike {
  readonly headers?: unknown;
  readonly user?: unknown;
}

/**
 * The request a GraphQL resolver call serves, for `<headers.x>` and `<user.x>`: the HTTP request that Nest's
 * Apollo and Mercurius drivers put on the context as `req` (where a guard puts `user`). Read when a template
 * asks, after the guards ran.
 */
export function graphQLFrame(context: ExecutionContext): RequestFrame | undefined {
  const request = context.getArgByIndex<{ req?: HttpRequestLike } | undefined>(2)?.req;
  if (!request) return undefined;
  return {
    get headers() {
      return request.headers;
    },
    get user() {
      return request.user;
    },
  };
}

interface SocketLike {
  readonly handshake?: { readonly headers?: unknown; readonly query?: unknown };
  readonly data?: { readonly user?: unknown };
}

/**
 * The request a WebSocket message serves, for `<headers.x>`, `<query.x>` and `<user.x>`: the socket's handshake
 * (socket.io keeps its headers and query) and `client.data.user` (socket.io's per-socket `data`, where a
 * connection handler or guard puts the principal; a `ws` gateway sets `client.data = { user }` itself).
 */
export function webSocketFrame(context: ExecutionContext): RequestFrame | undefined {
  const client = context.getArgByIndex<SocketLike | undefined>(0);
  if (!client || typeof client !== 'object') return undefined;
  return {
    get headers() {
      return client.handshake?.headers;
    },
    get query() {
      return client.handshake?.query;
    },
    get user() {
      return client.data?.user;
    },
  };
}
