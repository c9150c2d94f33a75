/**
 * Takes the advisory lock `$1` (a bigint) for the rest of the caller's transaction: it ends exactly at COMMIT
 * or ROLLBACK, on whichever pooled connection the transaction runs.
 */
export const ADVISORY_XACT_LOCK_SQL = 'SELECT pg_advisory_xact_lock($1::bigint)';

/**
 * As {@link ADVISORY_XACT_LOCK_SQL}, then sets the transaction's `lock_timeout` back to `$2` (what it was before
 * the wait's own): that bound is for the advisory lock, not for the statements the caller runs while holding it.
 * Not evaluated when the lock times out (the statement fails first).
 */
export const ADVISORY_XACT_LOCK_THEN_RESTORE_SQL =
  "SELECT pg_advisory_xact_lock($1::bigint), set_config('lock_timeout', $2, true)";

/** The transaction's `lock_timeout` before the wait sets its own. */
export const CURRENT_LOCK_TIMEOUT_SQL = "SELECT current_setting('lock_timeout') AS previous";

/** As {@link ADVISORY_XACT_LOCK_SQL} without waiting: `locked` is false when another transaction holds it. */
export const TRY_ADVISORY_XACT_LOCK_SQL = 'SELECT pg_try_advisory_xact_lock($1::bigint) AS locked';
