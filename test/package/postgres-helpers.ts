// An application on PostgreSQL, compiled by scripts/package-check.sh against the packed tarball (as postgres.mts
// and as postgres.cts) with `skipLibCheck: false` and without `pg` installed: the `nestjs-lock/postgres` entry
// types what it takes with pg-shaped interfaces of its own, so its typings never need `pg`'s.
import { Module } from '@nestjs/common';
import { LockModule, LockNotAcquiredError } from 'nestjs-lock';
import {
  PostgresLockStore,
  advisoryLockId,
  advisoryTransactionLock,
  type AdvisoryLockClient,
  type AdvisoryTransactionLockOptions,
  type PostgresLockStoreOptions,
  type PostgresPoolLike,
} from 'nestjs-lock/postgres';

/** What TypeORM's QueryRunner offers of a connection, as the application sees it. */
interface QueryRunnerLike {
  query(query: string, parameters?: unknown[]): Promise<unknown>;
}

export async function markPaid(runner: QueryRunnerLike, invoice: string): Promise<string> {
  const client: AdvisoryLockClient = runner;
  const options: AdvisoryTransactionLockOptions = { wait: 2_000 };
  try {
    return await advisoryTransactionLock(
      client,
      `invoice:${invoice}`,
      async () => {
        await runner.query('UPDATE invoices SET paid = true WHERE id = $1', [invoice]);
        return advisoryLockId(`invoice:${invoice}`);
      },
      options,
    );
  } catch (error) {
    if (error instanceof LockNotAcquiredError) return error.code;
    throw error;
  }
}

export function storeOn(pool: PostgresPoolLike): PostgresLockStore {
  const options: PostgresLockStoreOptions = { pool, table: 'app_locks', createTable: false };
  return new PostgresLockStore(options);
}

@Module({ imports: [LockModule.forRoot({ postgres: { connectionString: 'postgres://app@db:5432/app' } })] })
export class PostgresAppModule {}
