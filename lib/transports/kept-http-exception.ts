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
  /** The exception's `errorCode` option (Nest 12). */
  readonly errorCode?: string;
}

/** What of a thrown 4xx `exception` is kept: its status, body, nearest built-in class and error code. */
export function keptHttpException(exception: HttpException): KeptHttpException {
  const errorCode = (exception as { errorCode?: unknown }).errorCode;
  return {
    status: exception.getStatus(),
    body: exception.getResponse(),
    ...(typeof errorCode === 'string' ? { errorCode } : {}),
    ...nearestBuiltIn(exception),
  };
}

/**
 * The exception to throw again for a kept one: an instance of the kept built-in class when there is one (a
 * user's own class cannot be rebuilt from its body: it is thrown as that built-in, or as an `HttpException`).
 */
export function replayedHttpException(kept: KeptHttpException): HttpException {
  const options = kept.errorCode === undefined ? undefined : { errorCode: kept.errorCode };
  const BuiltIn = kept.exception === undefined ? undefined : BUILT_IN_4XX.get(kept.exception);
  if (BuiltIn && isBodyObject(kept.body)) {
    const rebuilt = new BuiltIn(kept.body, options);
    // a record from another version of Nest, where the class answered another status, is not trusted
    if (rebuilt.getStatus() === kept.status) return rebuilt;
  }
  return new HttpException(kept.body as string | Record<string, unknown>, kept.status, options);
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

/** A body the built-in constructors take as the whole response (a string or array they would wrap). */
function isBodyObject(body: unknown): body is object {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}
