// The `nestjs-lock/postgres` entry point: what a PostgreSQL application may want beyond `LockModule.forRoot({
// postgres })`: a lock tied to its own transaction, the advisory id of a key, and the store's option shapes.
// Nothing here loads `pg`: its types are the pg-shaped interfaces below, and the store loads `pg` when built.
export {
  PostgresLockStore,
  advisoryLockId,
  advisoryTransactionLock,
  type AdvisoryLockClient,
  type AdvisoryTransactionLockOptions,
  type PostgresClientLike,
  type PostgresLockStoreOptions,
  type PostgresPoolClientLike,
  type PostgresPoolLike,
  type PostgresQueryResult,
} from './stores/postgres/index.js';
