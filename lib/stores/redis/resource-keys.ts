/** The Redis names of one resource: its lease (with its holder record), its fence counter, its line of waiters and its release channel. */
export interface ResourceKeys {
  readonly lock: string;
  readonly fence: string;
  /**
   * The processes waiting for the lease, in the order they asked, each entry with the request it leaves to be
   * granted directly (see ACQUIRE, RELEASE and line/line-protocol.ts).
   */
  readonly line: string;
  /** Release notices; a process in the line hears its own on `<channel>:<owner>`. */
  readonly channel: string;
  /** The tokens a forced release ended (hash, token -> 1), kept until their holders' renewals asked. */
  readonly revoked: string;
}

/**
 * Lays out the keys of a resource so that all of them share one Redis Cluster hash slot for any user key.
 * The user key is wrapped in a hash tag `{...}` after escaping `{`, `}` and `%`, so it can neither close
 * the tag early, nor open an empty one, nor collide with another resource's names.
 */
export function resourceKeys(prefix: string, key: string): ResourceKeys {
  const base = `${prefix}{${escapeKey(key)}}`;
  return {
    lock: base,
    fence: `${base}:fence`,
    // not ':line': a process of an older version keeps its offers beside a line of bare owner ids there, and
    // the two encodings must not be read one for the other
    line: `${base}:waiters`,
    channel: `${base}:released`,
    revoked: `${base}:revoked`,
  };
}

/** A user key as it stands inside the hash tag: `{`, `}` and `%` as `%XX`. */
export function escapeKey(key: string): string {
  return key.replace(/[%{}]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The user key back from its form inside the hash tag (see escapeKey). */
export function unescapeKey(escaped: string): string {
  return escaped.replace(/%(7B|7D|25)/g, (_match, code: string) => String.fromCharCode(parseInt(code, 16)));
}
