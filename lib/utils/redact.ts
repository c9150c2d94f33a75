/**
 * The user-info part of a URL (`scheme://user:password@`), up to the last `@` before any white space; also of
 * one that does not parse: a separator mistyped (`redis//:pw@`, `redis:/pw@`, `//user:pw@`), or none at all
 * after the scheme of a store (`redis:pw@`, `rediss:`, `valkey:`, `http:`, `https:`).
 */
const URL_CREDENTIALS = /(?<![\w+.-])((?:[a-z][a-z0-9+.-]*)?(?::\/+|\/{2,})|(?:rediss?|valkeys?|https?):)[^\s]*@/gi;
/** A password passed as a URL's query parameter (`?password=...`). */
const QUERY_PASSWORD = /([?&](?:password|pass|pwd|auth)=)[^&#\s]*/gi;
/**
 * A password in a connection string that is not a URL (libpq's `host=db password=...`, `host:6380,password=...`,
 * `Host=db;Password=...`), and everything after it on its line: quoting and separators differ from one format to
 * the next, and a password may hold any of them.
 */
const CONNECTION_PASSWORD = /((?:^|[,;\s])(?:password|pass|pwd|auth)\s*=).*/gim;
/** Option names whose values are secrets (ioredis: `password`, `sentinelPassword`; TLS: `privateKey`, `key`). */
const SECRET_NAME = /pass(word)?|secret|token|auth|private|^key$/i;
/** Names of options that hold a secret, as written or mistyped (`password`, `sentinelPassword`, `pasword`). */
const SECRET_OPTION = /pass(word)?|pasword|secret|private|token|auth|credential|api_?key|access_?key/i;

/**
 * Whether an option's path (`redis.password`, `etcd.auth.password`) ends in the name of a secret; not a
 * decorator's label (`@WithLock(Users.resetPassword)`), which names a method.
 */
export function isSecretOptionName(option: string): boolean {
  const names = option.split(/[.\s[\]]+/).filter((name) => name !== '');
  const last = names[names.length - 1] ?? '';
  return /^[A-Za-z_$][\w$]*$/.test(last) && SECRET_OPTION.test(last);
}
/** How deep {@link redactValue} copies nested plain objects before it stops. */
const MAX_DEPTH = 4;

/**
 * `text` with the credentials of every URL in it replaced by `***`: `valkey://admin:S3cr3t@db:6379` →
 * `valkey://***@db:6379`; a password with an unescaped `@` is covered too.
 */
export function redactCredentials(text: string): string {
  return text.replace(URL_CREDENTIALS, '$1***@').replace(QUERY_PASSWORD, '$1***').replace(CONNECTION_PASSWORD, '$1***');
}

/**
 * A value meant as one URL (`redis`, a Redlock node, an etcd member) for an error that refuses it: everything up
 * to its last `@` but the scheme replaced by `***`, however malformed (`redis//:p w@host` → `redis//***@host`).
 */
export function redactUrl(value: string): string {
  // a connection string that is not a URL may carry a password of its own, which may hold an `@`
  const url = value.replace(CONNECTION_PASSWORD, '$1***');
  const at = url.lastIndexOf('@');
  if (at < 0) return redactCredentials(url);
  const scheme = /^(?:[a-z][a-z0-9+.-]*(?::\/+|\/{2,})|(?:rediss?|valkeys?|https?):|\/{2,})/i.exec(url)?.[0] ?? '';
  return `${scheme}***${url.slice(at)}`;
}

/**
 * A copy of an option's value that is safe to print or keep on an error: strings without URL credentials,
 * plain objects and arrays copied with their secret-named fields (`password`, ...) as `'***'`, and any other
 * object (a client, a store) by its class name only, since it may hold a connection's credentials.
 */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactCredentials(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) return '[...]';
  if (Array.isArray(value)) {
    const items = value.map((item) => redactValue(item, depth + 1));
    return items.every((item, index) => item === value[index]) ? value : items;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) {
    return `[${(value as { constructor?: { name?: string } }).constructor?.name || 'object'}]`;
  }
  const entries = Object.entries(value);
  const redacted = entries.map(([name, field]) => [
    name,
    SECRET_NAME.test(name) ? '***' : redactValue(field, depth + 1),
  ]);
  // nothing to hide: the value itself, so that a caller can still tell which object was refused
  return redacted.every(([, field], index) => field === entries[index][1]) ? value : Object.fromEntries(redacted);
}
