/*
 * What a NOTIFY on the store's channel says, as the SQL writes it (release.sql.ts, acquire.sql.ts,
 * leave-line.sql.ts) and the listener reads it. A payload is the key's notice (`noticeOf`: a hash, never the
 * key), alone or followed by the waiter ids of the processes first and next in the key's line. Waiter ids are
 * random per store and grant nothing: they only say whose turn it is.
 */

/** A release notice as read: the key it is for, and whose turn it is when it names anyone. */
export interface ReleaseNotice {
  /** The key's notice (see `noticeOf`). */
  readonly key: string;
  /** The process the key is reserved for: only its waiters ask now. Absent: every waiter of the key asks. */
  readonly first?: string;
  /** The process after it in the line: it asks once the reservation's hand-off window is over. */
  readonly next?: string;
}

/** Reads a payload heard on the store's channel. */
export function readReleaseNotice(payload: string): ReleaseNotice {
  const [key, first, next] = payload.split(' ');
  return {
    key,
    ...(first ? { first } : {}),
    ...(next ? { next } : {}),
  };
}

/**
 * The SQL expression of a payload that names `first` and, when not NULL, `next` (both SQL expressions of
 * waiter ids) after the key's notice `notice` (a SQL expression too).
 */
export function namedNoticeSql(notice: string, first: string, next: string): string {
  return `${notice} || ' ' || ${first} || coalesce(' ' || ${next}, '')`;
}
