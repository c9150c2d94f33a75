import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { LockNotAcquiredError } from '../../errors/lock-not-acquired.error.js';
import {
  ADVISORY_XACT_LOCK_SQL,
  ADVISORY_XACT_LOCK_THEN_RESTORE_SQL,
  CURRENT_LOCK_TIMEOUT_SQL,
  TRY_ADVISORY_XACT_LOCK_SQL,
} from './sql/advisory.sql.js';
import { advisoryLockId } from './advisory-lock-id.js';

/**
 * A client the helper runs its transaction on: a `pg` `Client` or `PoolClient`, or anything with the same
 * `query(text, values)` whose answer is `{ rows }` or the rows themselves (TypeORM's `QueryRunner`).
 */
export interface AdvisoryLockClient {
  /** Runs one statement with `$1`-style parameters. */
  query(text: string, values?: readonly unknown[]): Promise<unknown>;
}

/** How {@link advisoryTransactionLock} waits for the lock. */
export interface AdvisoryTransactionLockOptions {
  /**
   * `true`: wait until the lock is free; `false`: fail at once with `LockNotAcquiredError` when another
   * transaction holds it; a number: wait at most that many ms (`lock_timeout`), then fail the same way. The
   * callback's statements keep the transaction's own `lock_timeout`.
   * @default true
   */
  readonly wait?: boolean | number;
}

/**
 * Runs `fn` in a transaction of `client` that holds the advisory lock of `key` (see {@link advisoryLockId}):
 * `BEGIN`, `pg_advisory_xact_lock`, `fn`, then `COMMIT`, or `ROLLBACK` when `fn` throws (its error is
 * rethrown untouched). The lock ends exactly when the transaction does, on the connection that ran it: no
 * session state outlives it, so it is safe behind PgBouncer in transaction mode. It has no ttl (a stuck
 * transaction holds it until the server ends it: set `idle_in_transaction_session_timeout`), no fence and
 * no wake-up order: for those, use `LockService` on the Postgres store.
 *
 * Give it a connection of its own: a `pool.connect()` client, a TypeORM `QueryRunner` after `connect()`, or
 * the raw client of Knex (`trx` is not one: it has its own transaction) or Kysely's node-postgres driver.
 * @throws LockConfigurationError for a `wait` that is neither a boolean nor a whole number of ms
 * @throws LockNotAcquiredError when `wait` is `false` or a number and another transaction holds the lock
 * @example
 * const client = await pool.connect();
 * try {
 *   await advisoryTransactionLock(client, `invoice:${id}`, async () => {
 *     await client.query('UPDATE invoices SET paid = true WHERE id = $1', [id]);
 *   });
 * } finally {
 *   client.release();
 * }
 */
export async function advisoryTransactionLock<T>(
  client: AdvisoryLockClient,
  key: string,
  fn: () => Promise<T>,
  options: AdvisoryTransactionLockOptions = {},
): Promise<T> {
  const wait = checkWait(options.wait ?? true);
  const id = advisoryLockId(key);
  const started = performance.now();
  await client.query('BEGIN');
  let result: T;
  try {
    if (wait === false) {
      const [row] = rowsOf(await client.query(TRY_ADVISORY_XACT_LOCK_SQL, [id]));
      if (!(row as { locked?: boolean } | undefined)?.locked) throw new LockNotAcquiredError(key, undefined, 0);
    } else {
      let lock: [string, unknown[]] = [ADVISORY_XACT_LOCK_SQL, [id]];
      if (typeof wait === 'number') {
        // the bound is the lock's: once it is held, `fn`'s statements wait for row locks as they would without it
        const [row] = rowsOf(await client.query(CURRENT_LOCK_TIMEOUT_SQL));
        // SET LOCAL takes no parameters; the number is checked to be a whole number of ms
        await client.query(`SET LOCAL lock_timeout = ${wait}`);
        lock = [ADVISORY_XACT_LOCK_THEN_RESTORE_SQL, [id, (row as { previous: string }).previous]];
      }
      await client.query(...lock).catch((error: unknown) => {
        if ((error as { code?: unknown }).code === '55P03') {
          throw new LockNotAcquiredError(key, undefined, performance.now() - started);
        }
        throw error;
      });
    }
    result = await fn();
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  await client.query('COMMIT');
  return result;
}

function rowsOf(result: unknown): unknown[] {
  if (Array.isArray(result)) return result;
  const rows = (result as { rows?: unknown } | undefined)?.rows;
  return Array.isArray(rows) ? rows : [];
}

function checkWait(wait: unknown): boolean | number {
  if (typeof wait === 'boolean' || (typeof wait === 'number' && Number.isInteger(wait) && wait >= 1)) return wait;
  throw new LockConfigurationError('wait', wait, 'expected true, false or a whole number of ms (at least 1)');
}
