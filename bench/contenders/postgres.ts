import pg from 'pg';
import { LockManager, LockNotAcquiredError, PostgresLockStore } from '../../lib/index.js';
import { advisoryTransactionLock } from '../../lib/postgres.js';
import { ALL_ROLES, TTL, heldByCallback, retryingSession, type Library } from './contender.js';

/** This project's lease store on PostgreSQL, one LockManager per process, as a Nest app on Postgres has. */
export const nestjsLockPostgres: Library = {
  name: 'nestjs-lock on Postgres',
  shared: true,
  roles: ALL_ROLES,
  kind: 'ours',
  waiting:
    'local FIFO per key; across processes a line of waiters in a table: the release reserves the key for the first ' +
    'in line for the hand-off window and sends one NOTIFY (one LISTEN connection per store) naming the first and ' +
    'the next process in line: the first asks at once, the next once the window is over, the rest sleep on',
  async open(url) {
    const manager = new LockManager({
      store: new PostgresLockStore({ connectionString: url }),
      ttl: TTL,
      wait: 10_000,
    });
    await manager.verify();
    return retryingSession(
      (error) => error instanceof LockNotAcquiredError,
      async (key) => {
        const lock = await manager.acquire(key);
        return { release: async () => void (await lock.release()) };
      },
      () => manager.close(),
    );
  },
};

/**
 * This project's `advisoryTransactionLock` on a pooled connection: BEGIN, `pg_advisory_xact_lock`, the section,
 * COMMIT. The pool has a connection per concurrent holder, since a transaction holds its connection.
 */
export const advisoryTransactionLockPool: Library = {
  name: 'advisoryTransactionLock',
  shared: true,
  roles: ALL_ROLES,
  kind: 'ours',
  waiting: "the server's lock queue: a waiter blocks inside `pg_advisory_xact_lock` until the holder commits",
  async open(url) {
    const pool = new pg.Pool({ connectionString: url, max: 64 });
    return retryingSession(
      () => false,
      async (key) => {
        const client = await pool.connect();
        const held = await heldByCallback((inside) => advisoryTransactionLock(client, key, inside));
        return {
          release: async () => {
            await held.release();
            client.release();
          },
        };
      },
      () => pool.end(),
    );
  },
};
