import { throwError } from 'rxjs';
import type { LockError } from '../errors/lock.error.js';
import type { LockErrorPayload } from './lock-error-payload.js';
import type { LockErrorMapping, LockTransport } from './lock-transport.interface.js';

/** `@nestjs/microservices`' mark of a `@MessagePattern` or `@EventPattern` method. */
const PATTERN_METADATA = 'microservices:pattern';

/** What the microservice mapping calls back into: `LockInterceptor.toRpcException`. */
export interface RpcErrorMapping extends LockErrorMapping {
  toRpcException(error: LockError, payload: LockErrorPayload | undefined): Promise<Error>;
}

let microservices: Promise<typeof import('@nestjs/microservices')> | undefined;

/**
 * `@nestjs/microservices` (for `RpcException`): loaded at the first lock error of a message handler, so an
 * application without microservices never needs it, and the application's own copy, whose `instanceof`
 * checks Nest makes.
 */
function loadMicroservices(): Promise<typeof import('@nestjs/microservices')> {
  return (microservices ??= import('@nestjs/microservices'));
}

/**
 * The default `RpcException` of a lock error: one carrying the payload as its error object, which is what the
 * client's `send()` fails with; the error itself when it has no payload.
 */
export async function rpcLockException(error: LockError, payload: LockErrorPayload | undefined): Promise<Error> {
  if (!payload) return error;
  const { RpcException } = await loadMicroservices();
  return new RpcException({ ...payload });
}

/**
 * Microservices (TCP, NATS, Redis...): a message handler's message is its arguments, so it carries no request
 * for key templates; a lock error becomes an `RpcException`. A microservice connected with
 * `connectMicroservice()` without `inheritAppConfig` runs without the application's global interceptors.
 */
export const rpcTransport: LockTransport<RpcErrorMapping> = {
  type: 'rpc',
  serves: (context) => context.getType() === 'rpc',
  mayRunUnserved: ({ method }) => Reflect.getOwnMetadata(PATTERN_METADATA, method) !== undefined,
  async mapError(error, _call, mapping) {
    const mapped = await mapping.toRpcException(error, mapping.payloadOf(error));
    return throwError(() => mapped);
  },
};
