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
  return `BEGIN; SET LOCAL lock_timeout = ${bound}; SET LOCAL idle_in_transaction_session_timeout = ${bound}`;
}
