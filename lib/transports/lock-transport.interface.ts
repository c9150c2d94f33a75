import type { ExecutionContext } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { LockError } from '../errors/lock.error.js';
import type { HandlerSources, RequestFrame } from '../keys/key-sources.js';
import type { LockErrorPayload } from './lock-error-payload.js';

/** A method as Nest sees it: the class it runs on, its name there, and the method with every decorator's metadata. */
export interface TransportHandler {
  readonly owner: object;
  readonly methodName: string | symbol;
  readonly method: object;
  /** The path `RouterModule` mounts the owner's module under, when known (at bootstrap). */
  readonly modulePath?: string;
}

/** One call whose handler failed with a lock error. */
export interface TransportCall {
  /** Nest's context of the call, when a `LockInterceptor` serves it. */
  readonly context?: ExecutionContext;
  /** The call's arguments: Nest's own when intercepted, else the handler's (BullMQ's `job, token`). */
  readonly args: readonly unknown[];
}

/**
 * What every transport's mapping asks of the application's `LockInterceptor`: the payload a client may be told
 * (which depends on `exposeResolvedKeys`). Each transport extends it with the overridable method it calls.
 */
export interface LockErrorMapping {
  payloadOf(error: LockError): LockErrorPayload | undefined;
}

/**
 * One Nest transport as `@WithLock` and `LockInterceptor` meet it: the calls it serves, the request each call
 * carries for key templates, what its handlers offer key templates at bootstrap, and how a lock error becomes
 * what its clients understand. Every transport is one object in `LOCK_TRANSPORTS`.
 * @typeParam Mapping what its error mapping calls back into: the interceptor's overridable method for it
 */
export interface LockTransport<Mapping extends LockErrorMapping = LockErrorMapping> {
  /** Its name: `'http'`, `'graphql'`, `'ws'`, `'rpc'`, `'queue'`. */
  readonly type: string;
  /** Whether a call a `LockInterceptor` intercepts is one of this transport's (absent: none is, as for BullMQ jobs). */
  serves?(context: ExecutionContext): boolean;
  /** The request a call carries, for `<headers.x>`, `<user.x>`...; absent or `undefined` when it carries none. */
  frameOf?(context: ExecutionContext): RequestFrame | undefined;
  /**
   * What `handler` offers key templates besides its arguments, checked at bootstrap; `undefined` when it is none
   * of this transport's handlers.
   */
  handlerSources?(handler: TransportHandler): HandlerSources | undefined;
  /**
   * Whether `handler` is one of this transport's handlers that Nest may run with no `LockInterceptor` around it
   * (a job processor, a microservice connected without `inheritAppConfig`...): its `@WithLock` wrapper then maps
   * its lock errors itself, by this transport.
   */
  mayRunUnserved?(handler: TransportHandler): boolean;
  /**
   * How the call ends for a lock error: the Observable the call's result becomes (a thrown error, a value such
   * as a GraphQL field's error, or nothing when the transport has answered already).
   */
  mapError(error: LockError, call: TransportCall, mapping: Mapping): Promise<Observable<unknown>>;
  /**
   * `mapError` with the transport's default mapping, for an application with no `LockInterceptor` at all; absent
   * when such an application maps its own errors (it can put an interceptor around the handler, but not around
   * a BullMQ job).
   */
  mapErrorAlone?(error: LockError, call: TransportCall): Promise<Observable<unknown>>;
}
