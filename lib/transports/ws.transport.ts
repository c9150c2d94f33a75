import type { ExecutionContext } from '@nestjs/common';
import { EMPTY, throwError } from 'rxjs';
import type { LockError } from '../errors/lock.error.js';
import { frameSources, type RequestFrame } from '../keys/key-sources.js';
import type { LockErrorPayload } from './lock-error-payload.js';
import type { LockErrorMapping, LockTransport } from './lock-transport.interface.js';

/** `@nestjs/websockets`' mark of a `@SubscribeMessage` method. */
const MESSAGE_MAPPING_METADATA = 'websockets:message_mapping';

/** What the WebSocket mapping calls back into: `LockInterceptor.toWsException`. */
export interface WsErrorMapping extends LockErrorMapping {
  toWsException(error: LockError, payload: LockErrorPayload | undefined): Promise<Error>;
}

let websockets: Promise<typeof import('@nestjs/websockets')> | undefined;

/**
 * `@nestjs/websockets` (for `WsException`): loaded at the first lock error of a gateway, so an application
 * without gateways never needs it, and the application's own copy, whose `instanceof` checks Nest makes.
 */
function loadWebSockets(): Promise<typeof import('@nestjs/websockets')> {
  return (websockets ??= import('@nestjs/websockets'));
}

/** The default `WsException` of a lock error: one carrying the payload as its error object; the error itself when it has none. */
export async function wsLockException(error: LockError, payload: LockErrorPayload | undefined): Promise<Error> {
  if (!payload) return error;
  const { WsException } = await loadWebSockets();
  return new WsException({ ...payload });
}

interface SocketLike {
  readonly handshake?: { readonly headers?: unknown; readonly query?: unknown };
  readonly data?: { readonly user?: unknown };
}

/**
 * WebSockets (socket.io, ws): the handshake's headers and query and `client.data.user` for key templates, and a
 * `WsException` for a lock error, sent as the acknowledgement when the socket.io client asked for one, else as
 * Nest's `exception` event. NestJS 11 runs gateways without global interceptors.
 */
export const webSocketTransport: LockTransport<WsErrorMapping> = {
  type: 'ws',
  serves: (context) => context.getType() === 'ws',
  frameOf: webSocketFrame,
  handlerSources: ({ method }) =>
    isMessageHandler(method) ? frameSources('a WebSocket message handler', ['headers', 'query', 'user']) : undefined,
  mayRunUnserved: ({ method }) => isMessageHandler(method),
  async mapError(error, { context }, mapping) {
    const mapped = await mapping.toWsException(error, mapping.payloadOf(error));
    // socket.io hands the handler the client's acknowledgement callback after the data, when it sent one
    const ack = context?.getArgByIndex<unknown>(2);
    const getError = (mapped as { getError?: () => unknown }).getError;
    if (mapped === error || typeof ack !== 'function' || typeof getError !== 'function')
      return throwError(() => mapped);
    (ack as (response: unknown) => void)(getError.call(mapped));
    return EMPTY;
  },
};

/**
 * The request a WebSocket message serves, for `<headers.x>`, `<query.x>` and `<user.x>`: the socket's handshake
 * (socket.io keeps its headers and query) and `client.data.user` (socket.io's per-socket `data`, where a
 * connection handler or guard puts the principal; a `ws` gateway sets `client.data = { user }` itself).
 */
function webSocketFrame(context: ExecutionContext): RequestFrame | undefined {
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

function isMessageHandler(method: object): boolean {
  return Reflect.getOwnMetadata(MESSAGE_MAPPING_METADATA, method) !== undefined;
}
