/** The codes of Node's network errors, as a few words for messages. */
const NETWORK_ERRORS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed',
};

/**
 * What kind of failure `error` is, in a word or two that never carries a key, a value or a credential: a
 * Node network error by its code (`ECONNREFUSED`), a Redis error reply by its code (`WRONGTYPE`, `NOPERM`,
 * `NOAUTH`, `READONLY`, ...), `timeout` for a command that got no answer in time, `not connected` for one
 * given up while the client was reconnecting, `no quorum` for a Redlock round; `undefined` when unknown.
 */
export function failureKind(error: unknown): string | undefined {
  if (!isErrorLike(error)) return undefined;
  if (isNetworkError(error)) return (error as ErrorLike & { code: string }).code;
  if (error.name === 'AggregateError') return 'no quorum';
  if (
    error.name === 'MaxRetriesPerRequestError' ||
    /^Connection is closed|^Stream isn't writeable/.test(error.message)
  ) {
    return 'not connected';
  }
  if (/^Command timed out/.test(error.message) || error.name === 'NodeTimeoutError') return 'timeout';
  const reply = /^([A-Z][A-Z_-]{2,})\b/.exec(error.message);
  return reply?.[1];
}

interface ErrorLike {
  readonly name: string;
  readonly message: string;
}

/**
 * Whether `value` looks like an error. Not `instanceof Error`: Node's own network errors come from another
 * realm than the application's code when it runs in a VM context (Jest does this).
 */
function isErrorLike(value: unknown): value is ErrorLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ErrorLike).message === 'string' &&
    typeof (value as ErrorLike).name === 'string'
  );
}

/** Whether `error` is one of Node's network errors (it has a code like `ECONNREFUSED`, not a Redis reply). */
export function isNetworkError(error: unknown): boolean {
  return isErrorLike(error) && /^E[A-Z_]+$/.test(String((error as { code?: unknown }).code));
}

/** {@link failureKind} for a person: a network code with its meaning (`connection refused (ECONNREFUSED)`). */
export function describeFailureKind(kind: string): string {
  const meaning = NETWORK_ERRORS[kind];
  return meaning === undefined ? kind : `${meaning} (${kind})`;
}

/** The first of Node's network error codes that `text` names (`ECONNREFUSED`), for errors that quote one. */
export function networkCodeIn(text: string): string | undefined {
  return Object.keys(NETWORK_ERRORS).find((code) => new RegExp(`\\b${code}\\b`).test(text));
}
