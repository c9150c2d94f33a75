export { PostgresLockStore } from './postgres-lock-store.js';
export { advisoryLockId } from './advisory-lock-id.js';
export {
  advisoryTransactionLock,
  type AdvisoryLockClient,
  type AdvisoryTransactionLockOptions,
} from './advisory-transaction-lock.js';
export type {
  PostgresClientLike,
  PostgresLockStoreOptions,
  PostgresPoolClientLike,
  PostgresPoolLike,
  PostgresQueryResult,
} from './postgres-options.js';
