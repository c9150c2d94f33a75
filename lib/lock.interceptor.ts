import {
  BadRequestException,
  ConflictException,
  HttpException,
  Injectable,
  ServiceUnavailableException,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { catchError, type Observable } from 'rxjs';
import { isLockError, type LockError } from './errors/lock.error.js';
import type { LockKeyError } from './errors/lock-key.error.js';
import type { LockLostError } from './errors/lock-lost.error.js';
import type { LockNotAcquiredError } from './errors/lock-not-acquired.error.js';
import type { LockStoreError } from './errors/lock-store.error.js';
import { WITH_LOCK_METADATA } from './lock.constants.js';
import { runWithRequest } from './lock-context.js';

/**
 * The HTTP adapter of the module, registered globally by `LockModule`: it lets `@WithLock` key templates
 * read route params, query and body, and turns lock errors of HTTP handlers into responses: busy → 409
 * with `Retry-After`, store down or lease lost → 503, unusable key → 400. It never takes a lock itself,
 * and other exceptions pass through untouched. Extend it and override {@link toHttpException} to change
 * the mapping (then set `interceptor: false` and register your subclass).
 */
@Injectable()
export class LockInterceptor implements NestInterceptor {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    // only @WithLock handlers read the request (for key templates); the lock errors of any handler (one that
    // calls LockService itself) are mapped below
    const request = context.switchToHttp().getRequest<{ params?: unknown; query?: unknown; body?: unknown }>();
    const handled = Reflect.getOwnMetadata(WITH_LOCK_METADATA, context.getHandler())
      ? runWithRequest({ params: request?.params, query: request?.query, body: request?.body }, () => next.handle())
      : next.handle();
    return handled.pipe(
      catchError((error: unknown) => {
        throw isLockError(error) ? this.respond(error, context) : error;
      }),
    );
  }

  /**
   * The HTTP exception for a lock error, or the error itself to leave it to Nest's exception filters.
   * Override to change status codes or bodies; never put the lock token in a response.
   */
  protected toHttpException(error: LockError): HttpException | LockError {
    switch (error.code) {
      case 'LOCK_NOT_ACQUIRED': {
        const busy = error as LockNotAcquiredError;
        return new ConflictException({
          statusCode: 409,
          error: 'Conflict',
          message: `Resource "${busy.key}" is locked by another operation; retry later.`,
          resource: busy.key,
          retryAfterMs: busy.remainingTime,
        });
      }
      case 'LOCK_STORE_ERROR':
        return new ServiceUnavailableException({
          statusCode: 503,
          error: 'Service Unavailable',
          message: 'The lock store is unavailable; retry later.',
          resource: (error as LockStoreError).key,
        });
      case 'LOCK_LOST':
        return new ServiceUnavailableException({
          statusCode: 503,
          error: 'Service Unavailable',
          message: `The lock on "${(error as LockLostError).key}" was lost before the operation finished; retry.`,
          resource: (error as LockLostError).key,
        });
      case 'LOCK_KEY_INVALID':
        return new BadRequestException({
          statusCode: 400,
          error: 'Bad Request',
          message: (error as LockKeyError).message,
        });
      default:
        return error;
    }
  }

  private respond(error: LockError, context: ExecutionContext): unknown {
    const mapped = this.toHttpException(error);
    const retryAfter = retryAfterSeconds(error);
    if (mapped instanceof HttpException && retryAfter !== undefined) {
      const response = context.switchToHttp().getResponse();
      this.adapterHost.httpAdapter?.setHeader(response, 'Retry-After', String(retryAfter));
    }
    return mapped;
  }
}

/** Whole seconds (at least 1) until a retry may succeed, for the `Retry-After` header. */
function retryAfterSeconds(error: LockError): number | undefined {
  if (error.code === 'LOCK_NOT_ACQUIRED')
    return Math.max(1, Math.ceil(((error as LockNotAcquiredError).remainingTime ?? 1000) / 1000));
  if (error.code === 'LOCK_STORE_ERROR' || error.code === 'LOCK_LOST') return 1;
  return undefined;
}
