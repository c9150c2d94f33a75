import {
  Inject,
  Injectable,
  Optional,
  type CallHandler,
  type ExecutionContext,
  type HttpException,
  type NestInterceptor,
  type OnModuleInit,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { catchError, from, mergeMap, throwError, type Observable } from 'rxjs';
import { isLockError, type LockError } from './errors/lock.error.js';
import type { LockModuleOptions } from './interfaces/lock-module-options.interface.js';
import { WITH_LOCK_METADATA } from './lock.constants.js';
import { runWithRequest } from './core/lock-context.js';
import { lockErrorPayload, type LockErrorPayload } from './transports/lock-error-payload.js';
import { LOCK_MODULE_OPTIONS } from './lock.module-definition.js';
import { bindErrorMappings, replaceErrorMappings } from './lock-registry.js';
import { LockService } from './lock.service.js';
import { graphQLLockError, type GraphQLFieldInfo } from './transports/graphql.transport.js';
import { httpLockException } from './transports/http.transport.js';
import { transportServing, type LockErrorMappings } from './transports/lock-transports.js';
import { jobLockError, type DelayableJob } from './transports/queue.transport.js';
import { rpcLockException } from './transports/rpc.transport.js';
import { wsLockException } from './transports/ws.transport.js';

/**
 * The adapter between lock errors and every Nest transport, registered globally by `LockModule`. It gives the
 * key templates of a `@WithLock` handler its request (HTTP: route params, query, body, headers, `request.user`;
 * GraphQL: the context's `req` headers and `user`; WebSocket: the handshake's headers and query, and
 * `client.data.user`), and turns the lock errors of any handler
 * into what its transport's clients understand, from one payload ({@link lockErrorPayload}: `code`, `message`,
 * `resource`, `retryAfter`) and one overridable method per transport (also used by `@WithLock` handlers that
 * Nest runs without global interceptors: a microservice connected without `inheritAppConfig`, a gateway on
 * NestJS 11, a `@ResolveField` without `fieldResolverEnhancers`):
 * - HTTP ({@link LockInterceptor.toHttpException}): busy → 409 with `Retry-After`, store down or lease lost → 503, unusable key → 400;
 * - GraphQL ({@link LockInterceptor.toGraphQLError}): an error on the field, `extensions` with `code`, `retryAfter` and
 *   `resource`, no stack; the other fields of the response are untouched;
 * - WebSockets ({@link LockInterceptor.toWsException}): a `WsException` carrying the payload, sent as the acknowledgement when
 *   the socket.io client asked for one, else as Nest's `exception` event;
 * - microservices ({@link LockInterceptor.toRpcException}): an `RpcException` carrying the payload, the client's error;
 * - BullMQ `process(job, token)` methods ({@link LockInterceptor.toJobError}): a busy key (or an unavailable store) puts the
 *   job off for `retryAfter` without spending an attempt.
 * Contention is expected traffic: none of these reaches Nest's exception handlers as a crash, so nothing is
 * logged at ERROR for it. Payloads name the key template, never the resolved key (unless the module option
 * `exposeResolvedKeys`) and never the token; other exceptions pass through untouched. It never takes a lock.
 * Extend it and override a method to change a mapping, then set `interceptor: false` and register your
 * subclass (`{ provide: APP_INTERCEPTOR, useClass: MyLockInterceptor }`).
 */
@Injectable()
export class LockInterceptor implements NestInterceptor, OnModuleInit {
  /** This interceptor's mappings as the transports call them: its overridable methods, a subclass's if it is one. */
  private readonly mappings: LockErrorMappings = {
    payloadOf: (error) => this.payloadOf(error),
    toHttpException: (error, payload) => this.toHttpException(error, payload),
    setHeader: (response, name, value) => {
      this.adapterHost.httpAdapter?.setHeader(response, name, value);
    },
    toGraphQLError: (error, payload, info) => this.toGraphQLError(error, payload, info),
    toWsException: (error, payload) => this.toWsException(error, payload),
    toRpcException: (error, payload) => this.toRpcException(error, payload),
    toJobError: (error, payload, job, token) => this.toJobError(error, payload, job, token),
  };

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Optional() @Inject(LOCK_MODULE_OPTIONS) private readonly options?: LockModuleOptions,
    @Optional() private readonly locks?: LockService,
  ) {}

  /**
   * Serves the `@WithLock` methods of this application that it is not around: job processors, and handlers
   * Nest leaves without global interceptors (a hybrid microservice, a gateway on NestJS 11, a `@ResolveField`).
   */
  onModuleInit(): void {
    if (!this.locks) return;
    // a subclass is the application's own mapping: it replaces the module's, whichever Nest made first
    if (this.constructor !== LockInterceptor) replaceErrorMappings(this.locks, this.mappings);
    // forRootAsync() makes the module's even when its options turn it off
    else if (this.options?.interceptor !== false) bindErrorMappings(this.locks, this.mappings);
  }

  /**
   * Runs the handler; a `@WithLock` handler as served by this interceptor (so it leaves its lock errors to it),
   * with the request its transport finds, for its key templates. The lock errors of any handler (one that calls
   * LockService itself too) become its transport's answer; other errors pass untouched.
   */
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const transport = transportServing(context);
    if (!transport) return next.handle();
    const locked = Reflect.getOwnMetadata(WITH_LOCK_METADATA, context.getHandler()) as object | undefined;
    const handled = locked
      ? runWithRequest({ frame: transport.frameOf?.(context), handler: locked }, () => next.handle())
      : next.handle();
    return handled.pipe(
      catchError((error: unknown) =>
        isLockError(error)
          ? from(transport.mapError(error, { context, args: context.getArgs() }, this.mappings)).pipe(
              mergeMap((answer) => answer),
            )
          : throwError(() => error),
      ),
    );
  }

  /**
   * The HTTP exception for a lock error, or the error itself to leave it to Nest's exception filters.
   * Override to change status codes or bodies; never put the lock token in a response.
   * @param payload what any client may be told about `error` (see {@link lockErrorPayload})
   */
  protected toHttpException(error: LockError, payload: LockErrorPayload | undefined): HttpException | LockError {
    return httpLockException(error, payload);
  }

  /**
   * The GraphQL error a resolver's lock error becomes, or the error itself to leave it to Nest. The default
   * carries the payload's message, and `code`, `retryAfter` and `resource` in `extensions`, on the field of
   * `info`, without a stack. Any `Error` returned becomes that field's error (graphql-js reports it as is
   * when it is a `GraphQLError` with its `path`); the lock error itself is rethrown.
   * @param info the resolver's `info` (its `fieldNodes` and `path`)
   */
  protected toGraphQLError(
    error: LockError,
    payload: LockErrorPayload | undefined,
    info: GraphQLFieldInfo | undefined,
  ): Error | Promise<Error> {
    return graphQLLockError(error, payload, info);
  }

  /**
   * The `WsException` a gateway handler's lock error becomes (default: one carrying the payload as its error
   * object), or the error itself to leave it to Nest.
   */
  protected toWsException(error: LockError, payload: LockErrorPayload | undefined): Promise<Error> {
    return wsLockException(error, payload);
  }

  /**
   * The `RpcException` a microservice handler's lock error becomes (default: one carrying the payload as its
   * error object, which is what the client's `send()` fails with), or the error itself to leave it to Nest.
   */
  protected toRpcException(error: LockError, payload: LockErrorPayload | undefined): Promise<Error> {
    return rpcLockException(error, payload);
  }

  /**
   * What a BullMQ `process(job, token)` method under `@WithLock` throws for a lock error. The default puts the
   * job back in the delayed set for `retryAfter` when its key is busy or the store unavailable, and throws
   * BullMQ's `DelayedError` (no attempt spent, no `failed` event); an unusable key is BullMQ's
   * `UnrecoverableError`; a lost lease is thrown as it is, so BullMQ's `attempts` and `backoff` apply.
   * (`onContention: 'skip'` completes the job without running it instead.)
   * @param job the job being processed; `token` the worker's token for it
   */
  protected toJobError(
    error: LockError,
    payload: LockErrorPayload | undefined,
    job: DelayableJob | undefined,
    token: string | undefined,
  ): Error | Promise<Error> {
    return jobLockError(error, payload, job, token);
  }

  private payloadOf(error: LockError): LockErrorPayload | undefined {
    return lockErrorPayload(error, { exposeResolvedKeys: this.options?.exposeResolvedKeys === true });
  }
}
