/** The largest value PostgreSQL takes for a timeout setting, in ms (a larger one fails every transaction). */
const MAX_SETTING = 2_147_483_647;
/** The least time, in ms, a transaction may sit idle between its round trips before the server ends it. */
const LEAST_IDLE_BOUND = 5000;

/**
 * Opens a transaction whose row locks the server gives back by itself after `bound` ms: `lock_timeout` ends a
 * wait for a lock (SQLSTATE 55P03), and `idle_in_transaction_session_timeout` ends the session of a client that
 * leaves the transaction open between two round trips (SQLSTATE 25P03): a process frozen or cut off there
 * would otherwise keep the key's lease row locked until TCP keepalive notices (two hours by default), and every
 * later call on the key would wait behind it. `SET LOCAL`, not startup parameters: both end with the
 * transaction, so a pooler in transaction mode (PgBouncer) keeps no session state. Several statements in one
 * message (the simple query protocol): send it without parameters, or with the first statements of the
 * transaction written after it.
 */
export function beginSql(bound: number): string {
  if (!Number.isInteger(bound) || bound < 1) throw new RangeError('a transaction bound is a whole number of ms');
  const lockWait = Math.min(bound, MAX_SETTING);
  // the idle time between two round trips also covers their travel and this process's pauses (a GC, a busy
  // event loop), which no client deadline counts: a short query_timeout must not end healthy sessions
  const idle = Math.min(Math.max(bound, LEAST_IDLE_BOUND), MAX_SETTING);
  return `BEGIN; SET LOCAL lock_timeout = ${lockWait}; SET LOCAL idle_in_transaction_session_timeout = ${idle}`;
}
