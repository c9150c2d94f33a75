/** The Redis names of one resource: its lease (with its holder record), its fence counter, its line of waiters and its release channel. */
export interface ResourceKeys {
  readonly lock: string;
  readonly fence: string;
  /** The processes waiting for the lease, in the order they asked (see ACQUIRE and RELEASE). */
  readonly line: string;
  /** The request each process in the line leaves to be granted directly (see RELEASE). */
  readonly offers: string;
  /** Release notices; a process in the line hears its own on `<channel>:<owner>`. */
  readonly channel: string;
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
    line: `${base}:line`,
    offers: `${base}:offers`,
    channel: `${base}:released`,
  };
}

function escapeKey(key: string): string {
  return key.replace(/[%{}]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}
