import {
  Injectable,
  Optional,
  type CallHandler,
  type ExecutionContext,
  type HttpException,
  type NestInterceptor,
} from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import { AsyncResource } from 'node:async_hooks';
import { defer, lastValueFrom, type Observable } from 'rxjs';
import { IdempotencyKeyInvalidError } from '../errors/idempotency-key-invalid.error.js';
import { LockNotReadyError } from '../errors/lock-not-ready.error.js';
import { isLockError, type LockError } from '../errors/lock.error.js';
import type { RequestFrame } from '../keys/key-sources.js';
import { IDEMPOTENT_METADATA } from '../lock.constants.js';
import { errorMappingsFor } from '../lock-registry.js';
import { LockService } from '../lock.service.js';
import {
  idempotencyKeyOf,
  keptResponseOf,
  replayKeptResponse,
  requestFingerprint,
  type IdempotentRequest,
  type KeptResponse,
} from '../transports/http-idempotency.js';
import { httpLockException, type HttpErrorMapping } from '../transports/http.transport.js';
import { lockErrorPayload } from '../transports/lock-error-payload.js';
import type { IdempotentHandler } from './idempotent-handler.js';
import { loadClassTransformer, serializedResult } from './serialized-result.js';

/** The header a replayed response carries. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** The response of Express or Fastify, as far as a kept response needs it. */
interface HttpResponse {
  readonly statusCode?: number;
  getHeader?(name: string): unknown;
}

/**
 * Serves the HTTP handlers of `@Idempotent()`, which puts it around them: reads the idempotency key, replays a
 * kept response (with `Idempotent-Replayed: true`), or runs the handler once under a claim of the key and keeps
 * its final response (see `LockService.runIdempotent`). Its lock errors (409 while the first request runs, 400
 * for a missing or malformed key, 422 for a key reused for another request, 503 for a store down) are answered
 * by the application's `LockInterceptor` mappings (a subclass's, if registered), else by the defaults. The
 * service is looked up at the first call, in the application that routes it.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private service?: LockService;

  constructor(
    private readonly moduleRef: ModuleRef,
    @Optional() private readonly adapterHost?: HttpAdapterHost,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const definition = Reflect.getOwnMetadata(IDEMPOTENT_METADATA, context.getHandler()) as
      IdempotentHandler | undefined;
    if (!definition || context.getType() !== 'http') return next.handle();
    // bound to this call's async context, where LockInterceptor put the request the handler's @WithLock reads
    return defer(AsyncResource.bind(() => this.answer(definition, context, next)));
  }

  private async answer(definition: IdempotentHandler, context: ExecutionContext, next: CallHandler): Promise<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<IdempotentRequest & RequestFrame>();
    const response = http.getResponse<HttpResponse>();
    const runHandler = (): Promise<unknown> => lastValueFrom(next.handle(), { defaultValue: undefined });
    const service = this.lockService(definition);
    try {
      const { settings, option, label } = definition;
      const key = idempotencyKeyOf(request, settings.headerName, settings.header);
      if (key === undefined) {
        if (settings.required) throw new IdempotencyKeyInvalidError(settings.header, 'missing');
        return await runHandler();
      }
      const transformer = await loadClassTransformer();
      const answer = await service.runIdempotent({
        key,
        scope: definition.scopeOf(context.getClass(), context.getHandler(), request),
        fingerprint: requestFingerprint(request),
        settings,
        label,
        keyName: settings.header,
        option,
        run: runHandler,
        encode: (outcome) => {
          const contentType = response.getHeader?.('content-type');
          const kept = keptResponseOf(outcome, {
            status: response.statusCode ?? 200,
            contentType: typeof contentType === 'string' ? contentType : undefined,
            option,
            serialize: (result) => serializedResult(result, transformer, context.getHandler(), context.getClass()),
          });
          return kept === undefined ? undefined : JSON.stringify(kept);
        },
        replay: (outcome) => {
          const kept = JSON.parse(outcome) as KeptResponse;
          this.setHeader(response, REPLAYED_HEADER, 'true');
          if (kept.type !== undefined) this.setHeader(response, 'Content-Type', kept.type);
          // a status the handler set on the response itself (@Res({ passthrough: true })) is set again
          if (kept.kind !== 'exception') this.adapterHost?.httpAdapter?.status(response, kept.status);
          return replayKeptResponse(kept);
        },
      });
      return answer.result;
    } catch (error) {
      // what the handler itself threw passes untouched: only this interceptor's own lock errors are answered here
      if (!isLockError(error) || error.code === 'LOCK_CONFIGURATION' || error.code === 'LOCK_NOT_READY') throw error;
      throw this.httpAnswer(service, error, response);
    }
  }

  /** The HTTP exception of a lock error, by the application's `LockInterceptor` when it has one. */
  private httpAnswer(service: LockService, error: LockError, response: unknown): HttpException | LockError {
    const mapping: HttpErrorMapping = errorMappingsFor(service) ?? {
      payloadOf: (lockError) => lockErrorPayload(lockError),
      toHttpException: httpLockException,
      setHeader: (target, name, value) => this.setHeader(target, name, value),
    };
    const payload = mapping.payloadOf(error);
    const mapped = mapping.toHttpException(error, payload);
    if (mapped !== error && payload?.retryAfter !== undefined) {
      mapping.setHeader(response, 'Retry-After', String(payload.retryAfter));
    }
    return mapped;
  }

  private setHeader(response: unknown, name: string, value: string): void {
    this.adapterHost?.httpAdapter?.setHeader(response, name, value);
  }

  /** The `LockService` of the application this handler runs in. */
  private lockService(definition: IdempotentHandler): LockService {
    if (this.service) return this.service;
    let service: LockService | undefined;
    try {
      service = this.moduleRef.get(LockService, { strict: false });
    } catch {
      service = undefined;
    }
    if (!service) throw new LockNotReadyError(definition.label, '@Idempotent()');
    this.service = service;
    return service;
  }
}
