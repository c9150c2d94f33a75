import { HttpException, UnsupportedMediaTypeException } from '@nestjs/common';
import { IdempotencyKeyInvalidError, MAX_IDEMPOTENCY_KEY_LENGTH } from '../errors/idempotency-key-invalid.error.js';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { keptHttpException, replayedHttpException, type KeptHttpException } from './kept-http-exception.js';

/** The parts of an Express or Fastify request that idempotency reads. */
export interface IdempotentRequest {
  readonly method?: string;
  readonly originalUrl?: string;
  readonly url?: string;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>;
}

/** Visible ASCII, as an sf-string of the IETF draft holds (the quotes around it are optional here). */
const KEY_TEXT = /^[\x20-\x7e]+$/;

/**
 * The idempotency key of `request` from `header` (lower-case), without the double quotes of the draft's
 * sf-string form; `undefined` when it has none.
 * @throws IdempotencyKeyInvalidError when the header is empty, repeated, too long or not visible ASCII
 */
export function idempotencyKeyOf(request: IdempotentRequest, headerName: string, header: string): string | undefined {
  const raw = request.headers?.[headerName];
  if (raw === undefined) return undefined;
  if (Array.isArray(raw)) throw new IdempotencyKeyInvalidError(header, 'malformed');
  const trimmed = raw.trim();
  const key = trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : trimmed;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !KEY_TEXT.test(key)) {
    throw new IdempotencyKeyInvalidError(header, 'malformed');
  }
  return key;
}

/**
 * What makes two requests the same operation: the method, the URL as sent (path and query) and the body, in a
 * form where the order of a JSON object's fields does not matter. Only its digest is stored.
 * @throws UnsupportedMediaTypeException (415) for a request whose body no parser read: two such requests
 *   could not be told apart, and the second would be answered with the first one's response
 */
export function requestFingerprint(request: IdempotentRequest): string {
  if ((request.body === undefined || request.body === null) && carriesBody(request)) {
    const type = request.headers?.['content-type'];
    throw new UnsupportedMediaTypeException(
      `@Idempotent() needs the request body to tell one operation from another, and no parser read this one ` +
        `(Content-Type: ${typeof type === 'string' ? type : 'none'})`,
    );
  }
  const url = request.originalUrl ?? request.url ?? '';
  return `${request.method ?? ''} ${url}\n${canonicalBody(request.body)}`;
}

/** Whether the request says it has a body (RFC 9110: a Content-Length above 0, or a Transfer-Encoding). */
function carriesBody(request: IdempotentRequest): boolean {
  const length = request.headers?.['content-length'];
  return request.headers?.['transfer-encoding'] !== undefined || (typeof length === 'string' && Number(length) > 0);
}

function canonicalBody(body: unknown): string {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string') return `s:${body}`;
  if (Buffer.isBuffer(body)) return `b:${body.toString('base64')}`;
  return `j:${canonicalJson(body)}`;
}

/** JSON with every object's fields in sorted order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, field]) => `${JSON.stringify(name)}:${canonicalJson(field)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * An HTTP handler's final response as kept: a returned body (`json`, `text`, `bytes` in base64, or `empty`)
 * with the status Nest answered it with and a `Content-Type` the handler set; or a 4xx `HttpException`'s
 * status and response body (`exception`), thrown again on replay so the application's exception filters shape
 * it as they did the first time (as the same class when it is one of Nest's, or extends one).
 */
export interface KeptResponse extends KeptHttpException {
  readonly kind: 'json' | 'text' | 'bytes' | 'empty' | 'exception';
  readonly type?: string;
}

/**
 * What the first response's outcome is kept as, or `undefined` for one that is not (5xx, lock and other errors).
 * @param response.option where `@Idempotent()` is, for the refusal of a streamed body
 * @param response.serialize what an object result becomes before its JSON is kept (the form the application's
 *   serializer sends)
 * @throws LockConfigurationError for a streamed body (a `StreamableFile`, a stream): it cannot be kept
 */
export function keptResponseOf(
  outcome: { readonly result: unknown } | { readonly error: unknown },
  response: {
    readonly status: number;
    readonly contentType: string | undefined;
    readonly option: string;
    readonly serialize?: (result: object) => unknown;
  },
): KeptResponse | undefined {
  const { status, contentType } = response;
  if ('error' in outcome) {
    const { error } = outcome;
    if (!(error instanceof HttpException)) return undefined;
    const errorStatus = error.getStatus();
    if (errorStatus < 400 || errorStatus >= 500) return undefined;
    const kept = keptHttpException(error);
    return kept && { kind: 'exception', ...kept };
  }
  if (status < 200 || status >= 500) return undefined;
  const type = contentType === undefined ? {} : { type: contentType };
  const { result } = outcome;
  if (result === undefined || result === null) return { status, kind: 'empty', ...type };
  if (typeof result === 'string') return { status, kind: 'text', body: result, ...type };
  if (Buffer.isBuffer(result) || result instanceof Uint8Array) {
    return { status, kind: 'bytes', body: Buffer.from(result).toString('base64'), ...type };
  }
  if (typeof (result as { pipe?: unknown }).pipe === 'function' || isStreamable(result)) {
    throw new LockConfigurationError(
      response.option,
      result,
      'a streamed response cannot be kept for replay; return the body itself, or leave the handler without @Idempotent()',
    );
  }
  // what Express and Fastify send for an object: its JSON (toJSON included)
  const serialized = response.serialize ? response.serialize(result) : result;
  return { status, kind: 'json', body: JSON.parse(JSON.stringify(serialized)) as unknown, ...type };
}

function isStreamable(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && typeof (value as { getStream?: unknown }).getStream === 'function'
  );
}

/**
 * The handler's answer for a kept response: the body as the handler returned it (Nest sends it with the
 * handler's status, as the first time), or the kept `HttpException` thrown again.
 */
export function replayKeptResponse(kept: KeptResponse): unknown {
  switch (kept.kind) {
    case 'exception':
      throw replayedHttpException(kept);
    case 'bytes':
      return Buffer.from(kept.body as string, 'base64');
    case 'empty':
      return undefined;
    default:
      return kept.body;
  }
}
