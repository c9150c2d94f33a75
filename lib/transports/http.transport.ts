import {
  BadRequestException,
  ConflictException,
  HttpException,
  ServiceUnavailableException,
  UnprocessableEntityException,
} from '@nestjs/common';
import { throwError } from 'rxjs';
import type { LockError } from '../errors/lock.error.js';
import { REQUEST_SOURCES, type HandlerSources, type ParameterBinding, type RequestFrame } from '../keys/key-sources.js';
import type { LockErrorPayload } from './lock-error-payload.js';
import type { LockErrorMapping, LockTransport, TransportHandler } from './lock-transport.interface.js';
import { joinRoutes, routeParamNames } from './route-params.js';

/** Nest's metadata of a route handler (stable across Nest 11 and 12): its paths and its request method. */
const PATH_METADATA = 'path';
const METHOD_METADATA = 'method';
/** Where Nest's parameter decorators (`@Param('id')`, `@Body()`...) record a handler's parameters, on its class. */
const ROUTE_ARGS_METADATA = '__routeArguments__';
/** Marks the parameter entries of custom decorators made with `createParamDecorator`. */
const CUSTOM_ROUTE_ARGS_METADATA = '__customRouteArgs__';

/** Nest's `RouteParamtypes` that key templates tell apart; every other kind is `'other'`. */
const BINDING_BY_PARAMTYPE: Readonly<Record<number, ParameterBinding['source']>> = {
  0: 'request',
  3: 'body',
  4: 'query',
  5: 'params',
  6: 'headers',
};

/** What the HTTP mapping calls back into: `LockInterceptor.toHttpException`, and the application's HTTP adapter. */
export interface HttpErrorMapping extends LockErrorMapping {
  toHttpException(error: LockError, payload: LockErrorPayload | undefined): HttpException | LockError;
  /** Sets a header on `response` through the application's HTTP adapter (Express, Fastify). */
  setHeader(response: unknown, name: string, value: string): void;
}

/**
 * The default HTTP exception of a lock error: busy → 409, store down or lease lost → 503, unusable key → 400,
 * an idempotency key missing or malformed → 400, reused for another request → 422, each with the payload as its
 * body; the error itself when it has no payload (Nest's exception filters decide).
 */
export function httpLockException(error: LockError, payload: LockErrorPayload | undefined): HttpException | LockError {
  if (!payload) return error;
  switch (payload.code) {
    case 'LOCKED':
      return new ConflictException({ statusCode: 409, error: 'Conflict', ...payload });
    case 'LOCK_UNAVAILABLE':
    case 'LOCK_LOST':
      return new ServiceUnavailableException({ statusCode: 503, error: 'Service Unavailable', ...payload });
    case 'LOCK_KEY_INVALID':
    case 'IDEMPOTENCY_KEY_INVALID':
      return new BadRequestException({ statusCode: 400, error: 'Bad Request', ...payload });
    case 'IDEMPOTENCY_KEY_REUSED':
      return new UnprocessableEntityException({ statusCode: 422, error: 'Unprocessable Content', ...payload });
  }
}

/**
 * HTTP (Express and Fastify): the request's params, query, body, headers and `request.user` for key templates,
 * the routes and parameter decorators of a handler checked at bootstrap, and an HTTP exception with
 * `Retry-After` for a lock error. Nest runs every route handler inside the global interceptors.
 */
export const httpTransport: LockTransport<HttpErrorMapping> = {
  type: 'http',
  serves: (context) => context.getType() === 'http',
  // Express and Fastify requests both carry params, query, body, headers and a guard's user under those names
  frameOf: (context) => context.switchToHttp().getRequest<RequestFrame | undefined>(),
  handlerSources: httpHandlerSources,
  async mapError(error, { context }, mapping) {
    const payload = mapping.payloadOf(error);
    const mapped = mapping.toHttpException(error, payload);
    if (context && mapped instanceof HttpException && payload?.retryAfter !== undefined) {
      mapping.setHeader(context.switchToHttp().getResponse(), 'Retry-After', String(payload.retryAfter));
    }
    return throwError(() => mapped);
  },
};

/**
 * What Nest's metadata says about an HTTP handler's key sources: its routes (each module, controller and
 * method path), the route params they have, and what each parameter decorator binds. `undefined` when the
 * method is no HTTP handler (it needs both a route path and a request method).
 */
function httpHandlerSources({ owner, methodName, method, modulePath }: TransportHandler): HandlerSources | undefined {
  if (
    Reflect.getOwnMetadata(PATH_METADATA, method) === undefined ||
    Reflect.getOwnMetadata(METHOD_METADATA, method) === undefined
  ) {
    return undefined;
  }
  const routes = joinRoutes([
    [modulePath ?? ''],
    pathsOf(Reflect.getMetadata(PATH_METADATA, owner)),
    pathsOf(Reflect.getOwnMetadata(PATH_METADATA, method)),
  ]);
  const paramsByRoute = routes.map((route) => new Set(routeParamNames(route)));
  const someRouteParams = new Set(paramsByRoute.flatMap((params) => [...params]));
  const routeParams = new Set([...someRouteParams].filter((name) => paramsByRoute.every((p) => p.has(name))));
  return {
    kind: 'an HTTP handler',
    sources: REQUEST_SOURCES,
    routes,
    routeParams,
    someRouteParams,
    parameters: parameterBindings(Reflect.getMetadata(ROUTE_ARGS_METADATA, owner, methodName)),
  };
}

function pathsOf(metadata: unknown): string[] {
  if (Array.isArray(metadata)) return metadata.filter((path): path is string => typeof path === 'string');
  return typeof metadata === 'string' ? [metadata] : ['/'];
}

/** Nest records `{ "<paramtype>:<index>": { index, data } }`, custom decorators with a marked paramtype. */
function parameterBindings(metadata: unknown): (ParameterBinding | undefined)[] {
  const bindings: (ParameterBinding | undefined)[] = [];
  if (metadata === null || typeof metadata !== 'object') return bindings;
  for (const [key, entry] of Object.entries(metadata as Record<string, { index?: unknown; data?: unknown }>)) {
    const index = entry?.index;
    if (typeof index !== 'number') continue;
    const paramtype = key.slice(0, key.lastIndexOf(':'));
    const source = paramtype.includes(CUSTOM_ROUTE_ARGS_METADATA)
      ? 'other'
      : (BINDING_BY_PARAMTYPE[Number(paramtype)] ?? 'other');
    const field = typeof entry.data === 'string' ? entry.data : undefined;
    // Nest reads @Headers('X-Tenant') as the lower-case header, as Node names it
    bindings[index] = { source, field: source === 'headers' ? field?.toLowerCase() : field };
  }
  return bindings;
}
