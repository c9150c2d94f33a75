import { LockStoreError } from '../../errors/lock-store.error.js';
import type { PostgresPoolLike } from '../../interfaces/postgres-store-options.interface.js';
import { advisoryLockId } from './advisory-lock-id.js';
import { withPooledClient } from './pooled-client.js';
import type { PostgresTables } from './postgres-tables.js';
import { ADVISORY_XACT_LOCK_SQL } from './sql/advisory.sql.js';
import { COLUMNS_SQL, expectedColumns, PRIVILEGES_SQL, schemaDdl } from './sql/schema.sql.js';

/**
 * Creates the store's tables when missing, in one transaction that first takes an advisory lock of their
 * names: instances booting at once run the DDL one after another (two concurrent `CREATE TABLE IF NOT
 * EXISTS` of one name can fail on the catalog's unique index), and the later ones find the tables there.
 * `begin` opens it bounded on the server (see beginSql): an instance frozen within it would otherwise hold the
 * advisory lock, which every booting instance waits for, and the DDL's table locks.
 */
export async function createTables(pool: PostgresPoolLike, tables: PostgresTables, begin: string): Promise<void> {
  await withPooledClient(pool, async (client) => {
    await client.query(begin);
    try {
      await client.query(ADVISORY_XACT_LOCK_SQL, [advisoryLockId(`ddl:${tables.leases}`)]);
      await client.query(schemaDdl(tables));
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}

/**
 * Checks that the store's tables are there with the columns and types it uses, and that the connected role
 * may read and write them.
 * @throws LockStoreError naming the missing table or column and what to do
 */
export async function checkTables(pool: PostgresPoolLike, tables: PostgresTables, target: string): Promise<void> {
  const expected = expectedColumns(tables);
  const { rows } = await pool.query(COLUMNS_SQL, [tables.schema, expected.map(({ table }) => table)]);
  const columns = rows as Array<{ table_name: string; column_name: string; data_type: string }>;
  const found = new Map(columns.map((row) => [`${row.table_name}.${row.column_name}`, row.data_type]));
  for (const { table, columns } of expected) {
    const name = `${tables.schema}.${table}`;
    if (!Object.keys(columns).some((column) => found.has(`${table}.${column}`))) {
      throw refused(
        target,
        `table ${name} is missing: create it with the DDL of PostgresLockStore.ddl(), or leave createTable on`,
      );
    }
    for (const [column, type] of Object.entries(columns)) {
      const actual = found.get(`${table}.${column}`);
      if (actual === type) continue;
      throw refused(
        target,
        `table ${name} has another shape than this version of nestjs-lock expects: column "${column}" ` +
          `${actual === undefined ? 'is missing' : `is ${actual}, expected ${type}`} (compare with PostgresLockStore.ddl())`,
      );
    }
  }
  const all = [tables.leases, tables.waiters, tables.permits, tables.records];
  const { rows: privileges } = await pool.query(PRIVILEGES_SQL, [all]);
  const denied = (privileges as Array<{ name: string; writable: boolean }>)
    .filter((row) => !row.writable)
    .map((row) => row.name);
  if (denied.length > 0) {
    throw refused(
      target,
      `the connected role may not read and write ${denied.join(', ')}: GRANT SELECT, INSERT, UPDATE, DELETE on them`,
    );
  }
}

function refused(target: string, why: string): LockStoreError {
  return new LockStoreError('verify its tables', undefined, undefined, `PostgreSQL at ${target}: ${why}`);
}
