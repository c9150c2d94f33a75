import {
  BadRequestException,
  ConflictException,
  ForbiddenException,
  GoneException,
  HttpException,
  ImATeapotException,
  MethodNotAllowedException,
  MisdirectedException,
  NotAcceptableException,
  NotFoundException,
  PayloadTooLargeException,
  PreconditionFailedException,
  RequestTimeoutException,
  UnauthorizedException,
  UnprocessableEntityException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { STATUS_CODES } from 'node:http';

type BuiltInException = new (body: object, options?: { errorCode?: string }) => HttpException;

/**
 * Nest's own 4xx exceptions, by a name that stays the same in every version (kept records outlive deploys).
 * Each holds nothing but what `HttpException` holds, so one rebuilt from its kept body is the one thrown.
 */
const BUILT_IN_4XX: ReadonlyMap<string, BuiltInException> = new Map(
  Object.entries({
    BadRequestException,
    UnauthorizedException,
    ForbiddenException,
    NotFoundException,
    MethodNotAllowedException,
    NotAcceptableException,
    RequestTimeoutException,
    ConflictException,
    GoneException,
    PreconditionFailedException,
    PayloadTooLargeException,
    UnsupportedMediaTypeException,
    ImATeapotException,
    MisdirectedException,
    UnprocessableEntityException,
  }),
);

/** A 4xx `HttpException` as kept for replay. */
export interface KeptHttpException {
  readonly status: number;
  readonly body?: unknown;
  /**
   * The nearest of Nest's own exception classes the thrown one is (itself, or the one it extends), so that a
   * filter that caught the first answer by that class (`@Catch(BadRequestException)`) catches the replay too.
   */
  readonly exception?: string;
  /** The exception's `errorCode` option (Nest 12), or a field of that name its class set. */
  readonly errorCode?: string;
  /** The thrown class's `name` and `message`, which a replay thrown as the built-in class would not have. */
  readonly name?: string;
  readonly message?: string;
}

/**
 * What of a thrown 4xx `exception` is kept: its status, body, nearest built-in class, error code, name and
 * message; `undefined` for a body that JSON cannot carry (a cycle): nothing is kept, and a retry runs again.
 * An error given as the body (`new ConflictException(error)`) is kept as what Nest 12 sends for it, the status
 * text: none of the error's fields (a query's parameters, a client's request config) reaches the store or a
 * replay.
 */
export function keptHttpException(exception: HttpException): KeptHttpException | undefined {
  const status = exception.getStatus();
  const response = exception.getResponse();
  const fromError = response instanceof Error;
  const body = fromError ? { statusCode: status, message: STATUS_CODES[status] ?? 'Error' } : response;
  if (!survivesJson(body)) return undefined;
  const errorCode = (exception as { errorCode?: unknown }).errorCode;
  return {
    status,
    body,
    ...(typeof errorCode === 'string' ? { errorCode } : {}),
    ...nearestBuiltIn(exception),
    name: exception.name,
    // the error's message is the error's: the replay's comes from the kept body
    ...(fromError ? {} : { message: exception.message }),
  };
}

/**
 * The exception to throw again for a kept one: an instance of the kept built-in class when there is one (a
 * user's own class cannot be rebuilt from its body: it is thrown as that built-in, or as an `HttpException`).
 */
export function replayedHttpException(kept: KeptHttpException): HttpException {
  const errorCode = typeof kept.errorCode === 'string' ? kept.errorCode : undefined;
  const options = errorCode === undefined ? undefined : { errorCode };
  const BuiltIn = kept.exception === undefined ? undefined : BUILT_IN_4XX.get(kept.exception);
  let replayed: HttpException | undefined;
  if (BuiltIn && isBodyObject(kept.body)) {
    const rebuilt = new BuiltIn(kept.body, options);
    // a record from another version of Nest, where the class answered another status, is not trusted
    if (rebuilt.getStatus() === kept.status) replayed = rebuilt;
  }
  replayed ??= new HttpException(kept.body as string | Record<string, unknown>, kept.status, options);
  // Nest 11 has no `errorCode` option; a class of the application's own may set the field itself
  if (errorCode !== undefined) Object.assign(replayed, { errorCode });
  if (typeof kept.name === 'string') replayed.name = kept.name;
  if (typeof kept.message === 'string') replayed.message = kept.message;
  return replayed;
}

function nearestBuiltIn(exception: HttpException): { exception?: string } {
  for (
    let prototype = Object.getPrototypeOf(exception) as object | null;
    prototype !== null && prototype !== HttpException.prototype;
    prototype = Object.getPrototypeOf(prototype) as object | null
  ) {
    for (const [name, BuiltIn] of BUILT_IN_4XX) if (BuiltIn.prototype === prototype) return { exception: name };
  }
  return {};
}

/** Whether `body` can be kept as JSON (`JSON.stringify` throws on a cycle, or a `BigInt`). */
function survivesJson(body: unknown): boolean {
  try {
    JSON.stringify(body);
    return true;
  } catch {
    return false;
  }
}

/** A body the built-in constructors take as the whole response (a string or array they would wrap). */
function isBodyObject(body: unknown): body is object {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}
