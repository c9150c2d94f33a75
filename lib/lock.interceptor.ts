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
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { catchError, type Observable } from 'rxjs';
import { isLockError, type LockError } from './errors/lock.error.js';
import type { LockModuleOptions } from './interfaces/lock-module-options.interface.js';
import { WITH_LOCK_METADATA } from './lock.constants.js';
import type { RequestFrame } from './key-sources.js';
import { runWithRequest } from './lock-context.js';
import { lockErrorPayload, type LockErrorPayload } from './lock-error-payload.js';
import { LOCK_MODULE_OPTIONS } from './lock.module-definition.js';

/**
 * The HTTP adapter of the module, registered globally by `LockModule`: it lets the key templates of a
 * `@WithLock` handler read its request (route params, query, body, headers, `request.user`), and turns lock
 * errors of HTTP handlers into responses: busy → 409 with `Retry-After`, store down or lease lost → 503,
 * unusable key → 400. Bodies name the key template, never the resolved key (unless the module option
 * `exposeResolvedKeys`) and never the token. It never takes a lock itself, and other exceptions pass
 * through untouched. Extend it and override {@link toHttpException} to change the mapping (then set
 * `interceptor: false` and register your subclass).
 */
@Injectable()
export class LockInterceptor implements NestInterceptor {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Optional() @Inject(LOCK_MODULE_OPTIONS) private readonly options?: LockModuleOptions,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    // only @WithLock handlers read the request (for key templates); the lock errors of any handler (one that
    // calls LockService itself) are mapped below
    const locked = Reflect.getOwnMetadata(WITH_LOCK_METADATA, context.getHandler()) as object | undefined;
    // Express and Fastify requests both carry params, query, body, headers and a guard's user under those names
    const request = context.switchToHttp().getRequest<RequestFrame | undefined>();
    const handled =
      locked && request ? runWithRequest({ frame: request, handler: locked }, () => next.handle()) : next.handle();
    return handled.pipe(
      catchError((error: unknown) => {
        throw isLockError(error) ? this.respond(error, context) : error;
      }),
    );
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

  private respond(error: LockError, context: ExecutionContext): unknown {
    const payload = lockErrorPayload(error, { exposeResolvedKeys: this.options?.exposeResolvedKeys === true });
    const mapped = this.toHttpException(error, payload);
    if (mapped instanceof HttpException && payload?.retryAfter !== undefined) {
      const response = context.switchToHttp().getResponse();
      this.adapterHost.httpAdapter?.setHeader(response, 'Retry-After', String(payload.retryAfter));
    }
    return mapped;
  }
}
