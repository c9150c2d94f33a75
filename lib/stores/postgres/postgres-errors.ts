import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { LockStoreError } from '../../errors/lock-store.error.js';
import { describeFailureKind, isNetworkError } from '../../utils/failure-kind.js';

/** SQLSTATE codes a lock store meets, in a few words that name no key, value or credential. */
const SQLSTATES: Readonly<Record<string, string>> = {
  '57P01': 'the server ended the connection (pg_terminate_backend or shutdown)',
  '57P02': 'the server crashed and ended every connection',
  '57P03': 'the server is starting up or shutting down',
  '57014': 'statement timeout or cancel',
  '55P03': 'lock timeout',
  '25P03': 'the server ended a transaction left idle (idle_in_transaction_session_timeout)',
  '40001': 'serialization failure',
  '40P01': 'deadlock detected',
  '42P01': 'table missing (run the DDL of PostgresLockStore.ddl(), or leave createTable on)',
  '42703': 'a column of the lock tables is missing (the table has another shape)',
  '42501': 'permission denied on the lock tables',
  '28P01': 'password authentication failed',
  '28000': 'the server refused this role (no such role, or pg_hba.conf)',
  '3D000': 'database does not exist',
  '53300': 'too many connections',
  '54000': "the key is too long for the lock tables' index (lower maxKeyLength: 2,000 bytes with the prefix at most)",
  '25006': 'read-only transaction (a standby, or default_transaction_read_only)',
};

/** What went wrong with `error`, naming no key nor credential: its SQLSTATE, a network code, or a timeout. */
export function pgFailure(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    const words = SQLSTATES[code] ?? (code.startsWith('08') ? 'connection failure' : undefined);
    return words === undefined ? `SQLSTATE ${code}` : `${words} (SQLSTATE ${code})`;
  }
  if (isNetworkError(error)) return describeFailureKind(String(code));
  const message = error instanceof Error ? error.message : '';
  // pg-pool's words when connectionTimeoutMillis passed before the pool had a connection to give
  if (/timeout exceeded when trying to connect/i.test(message)) {
    return 'no connection of the pool came free in time (connectionTimeoutMillis): a busy pool, or a server slow to accept';
  }
  if (/timeout|timed out/i.test(message)) return 'no answer in time (timeout)';
  if (/Connection terminated|Client has encountered a connection error|not queryable/i.test(message)) {
    return 'connection lost';
  }
  return undefined;
}

/** Whether `error` is the server's answer to a statement (it has a SQLSTATE of a class other than connection). */
export function isServerAnswer(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|57)/.test(code);
}

/**
 * The `LockStoreError` of the Postgres store for `operation` on `key` at `target` (`host:port/database`). A
 * `pg` error's `detail` and `where` may quote a row (a key), so only its SQLSTATE and words of ours are shown.
 */
export function postgresStoreError(
  operation: string,
  key: string | undefined,
  target: string,
  error: unknown,
): LockStoreError | LockConfigurationError {
  if (error instanceof LockStoreError || error instanceof LockConfigurationError) return error;
  const failure = pgFailure(error);
  const detail = `PostgreSQL at ${target}: ${failure ?? 'failed'}`;
  // pg's own text where no key is concerned (it names the schema or table refused), except for a network
  // failure (it repeats the address) and a refusal of the role (it names the role)
  const namesRole = refusesRole(error);
  const keyed =
    error instanceof Error && !namesRole && !isNetworkError(error)
      ? `PostgreSQL at ${target}: ${error.message}`
      : undefined;
  // the cause, which a logger may print, then says no more than the message
  if (namesRole && error instanceof Error && failure !== undefined) error.message = failure;
  return new LockStoreError(operation, key, scrubbed(error), detail, keyed);
}

/** Whether `error` is PostgreSQL refusing a role, in words that name it: authentication, or too many connections. */
function refusesRole(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('28') || code === '53300');
}

/** Drops the fields of a `pg` error that may quote a row's values, keeping its message and code. */
function scrubbed(error: unknown): unknown {
  if (typeof error !== 'object' || error === null) return error;
  for (const field of ['detail', 'where', 'internalQuery', 'hint']) {
    if (field in error) (error as Record<string, unknown>)[field] = undefined;
  }
  return error;
}
