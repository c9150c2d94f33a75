import {
  BadRequestException,
  ConflictException,
  HttpException,
  Inject,
  Injectable,
  Optional,
  ServiceUnavailableException,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  type OnModuleInit,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { catchError, EMPTY, from, mergeMap, of, throwError, type Observable } from 'rxjs';
import { isLockError, type LockError } from './errors/lock.error.js';
import type { LockModuleOptions } from './interfaces/lock-module-options.interface.js';
import { WITH_LOCK_METADATA } from './lock.constants.js';
import type { RequestFrame } from './keys/key-sources.js';
import { runWithRequest } from './core/lock-context.js';
import { lockErrorPayload, type LockErrorPayload } from './transports/lock-error-payload.js';
import { LOCK_MODULE_OPTIONS } from './lock.module-definition.js';
import { bindErrorMapper, replaceErrorMapper, type UnservedTransport } from './lock-registry.js';
import { LockService } from './lock.service.js';
import { graphQLLockError, type GraphQLFieldInfo } from './transports/graphql-error.js';
import { jobLockError, type DelayableJob } from './transports/job-error.js';
import { loadMicroservices, loadWebSockets } from './transports/optional-peers.js';
import { graphQLFrame, webSocketFrame } from './transports/request-frames.js';

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
    if (this.constructor !== LockInterceptor) replaceErrorMapper(this.locks, this);
    // forRootAsync() makes the module's even when its options turn it off
    else if (this.options?.interceptor !== false) bindErrorMapper(this.locks, this);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    switch (context.getType<string>()) {
      case 'http':
        return this.interceptHttp(context, next);
      case 'graphql':
        return this.answer(this.serve(context, next, graphQLFrame), (error) => this.graphQLAnswer(error, context));
      case 'ws':
        return this.answer(this.serve(context, next, webSocketFrame), (error) => this.wsAnswer(error, context));
      case 'rpc':
        return this.answer(
          this.serve(context, next, () => undefined),
          async (error) => {
            throw await this.toRpcException(error, this.payloadOf(error));
          },
        );
      default:
        return next.handle();
    }
  }

  /**
   * The HTTP exception for a lock error, or the error itself to leave it to Nest's exception filters.
   * Override to change status codes or bodies; never put the lock token in a response.
   * @param payload what any client may be told about `error` (see {@link lockErrorPayload})
   */
  protected toHttpException(error: LockError, payload: LockErrorPayload | undefined): HttpException | LockError {
    if (!payload) return error;
    switch (payload.code) {
      case 'LOCKED':
        return new ConflictException({ statusCode: 409, error: 'Conflict', ...payload });
      case 'LOCK_UNAVAILABLE':
      case 'LOCK_LOST':
        return new ServiceUnavailableException({ statusCode: 503, error: 'Service Unavailable', ...payload });
      case 'LOCK_KEY_INVALID':
        return new BadRequestException({ statusCode: 400, error: 'Bad Request', ...payload });
    }
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
    return payload ? graphQLLockError(payload, info) : error;
  }

  /**
   * The `WsException` a gateway handler's lock error becomes (default: one carrying the payload as its error
   * object), or the error itself to leave it to Nest.
   */
  protected async toWsException(error: LockError, payload: LockErrorPayload | undefined): Promise<Error> {
    if (!payload) return error;
    const { WsException } = await loadWebSockets();
    return new WsException({ ...payload });
  }

  /**
   * The `RpcException` a microservice handler's lock error becomes (default: one carrying the payload as its
   * error object, which is what the client's `send()` fails with), or the error itself to leave it to Nest.
   */
  protected async toRpcException(error: LockError, payload: LockErrorPayload | undefined): Promise<Error> {
    if (!payload) return error;
    const { RpcException } = await loadMicroservices();
    return new RpcException({ ...payload });
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

  /** The error a job processor throws for `error`. @internal */
  jobError(error: LockError, job: DelayableJob | undefined, token: string | undefined): Promise<Error> {
    return Promise.resolve(this.toJobError(error, this.payloadOf(error), job, token));
  }

  /**
   * What a `@WithLock` handler of `transport` that no `LockInterceptor` is around fails with for `error` (a
   * microservice connected without `inheritAppConfig`, a gateway on NestJS 11, a `@ResolveField` without
   * `fieldResolverEnhancers`): the same overridable mapping as when it is around; for GraphQL, the error the
   * resolver resolves to, without a path (graphql-js adds it). A WebSocket client that asked for an
   * acknowledgement gets Nest's `exception` event instead. @internal
   */
  async transportError(transport: UnservedTransport, error: LockError): Promise<Error> {
    const payload = this.payloadOf(error);
    switch (transport) {
      case 'rpc':
        return this.toRpcException(error, payload);
      case 'ws':
        return this.toWsException(error, payload);
      case 'graphql':
        return this.toGraphQLError(error, payload, undefined);
    }
  }

  private interceptHttp(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    // Express and Fastify requests both carry params, query, body, headers and a guard's user under those names
    const handled = this.serve(context, next, (http) => http.switchToHttp().getRequest<RequestFrame | undefined>());
    return handled.pipe(
      catchError((error: unknown) => {
        throw isLockError(error) ? this.respondHttp(error, context) : error;
      }),
    );
  }

  /**
   * Runs the handler; a `@WithLock` handler as served by this interceptor (so it leaves its lock errors to it),
   * with the request `frameOf` finds, for its key templates. The lock errors of any handler (one that calls
   * LockService itself too) are mapped by the caller.
   */
  private serve(
    context: ExecutionContext,
    next: CallHandler,
    frameOf: (context: ExecutionContext) => RequestFrame | undefined,
  ): Observable<unknown> {
    const locked = Reflect.getOwnMetadata(WITH_LOCK_METADATA, context.getHandler()) as object | undefined;
    return locked ? runWithRequest({ frame: frameOf(context), handler: locked }, () => next.handle()) : next.handle();
  }

  /** Lets `answer` turn the lock errors of the handler into its transport's; other errors pass untouched. */
  private answer(
    handled: Observable<unknown>,
    answer: (error: LockError) => Promise<Observable<unknown>>,
  ): Observable<unknown> {
    return handled.pipe(
      catchError((error: unknown) =>
        isLockError(error) ? from(answer(error)).pipe(mergeMap((result) => result)) : throwError(() => error),
      ),
    );
  }

  private async graphQLAnswer(error: LockError, context: ExecutionContext): Promise<Observable<unknown>> {
    const info = context.getArgByIndex<GraphQLFieldInfo | undefined>(3);
    const mapped = await this.toGraphQLError(error, this.payloadOf(error), info);
    if (mapped === error) return throwError(() => error);
    // the field's value: graphql-js reports a returned error as that field's error, and Nest's exception
    // handler, which logs every thrown error that is not an HttpException at ERROR, never sees it
    return of(mapped);
  }

  private async wsAnswer(error: LockError, context: ExecutionContext): Promise<Observable<unknown>> {
    const mapped = await this.toWsException(error, this.payloadOf(error));
    // socket.io hands the handler the client's acknowledgement callback after the data, when it sent one
    const ack = context.getArgByIndex<unknown>(2);
    const getError = (mapped as { getError?: () => unknown }).getError;
    if (mapped === error || typeof ack !== 'function' || typeof getError !== 'function')
      return throwError(() => mapped);
    (ack as (response: unknown) => void)(getError.call(mapped));
    return EMPTY;
  }

  private respondHttp(error: LockError, context: ExecutionContext): unknown {
    const payload = this.payloadOf(error);
    const mapped = this.toHttpException(error, payload);
    if (mapped instanceof HttpException && payload?.retryAfter !== undefined) {
      const response = context.switchToHttp().getResponse();
      this.adapterHost.httpAdapter?.setHeader(response, 'Retry-After', String(payload.retryAfter));
    }
    return mapped;
  }

  private payloadOf(error: LockError): LockErrorPayload | undefined {
    return lockErrorPayload(error, { exposeResolvedKeys: this.options?.exposeResolvedKeys === true });
  }
}
