/**
 * Takes the advisory lock `$1` (a bigint) for the rest of the caller's transaction: it ends exactly at COMMIT
 * or ROLLBACK, on whichever pooled connection the transaction runs.
 */
export const ADVISORY_XACT_LOCK_SQL = 'SELECT pg_advisory_xact_lock($1::bigint)';

/** As {@link ADVISORY_XACT_LOCK_SQL} without waiting: `locked` is false when another transaction holds it. */
export const TRY_ADVISORY_XACT_LOCK_SQL = 'SELECT pg_try_advisory_xact_lock($1::bigint) AS locked';
