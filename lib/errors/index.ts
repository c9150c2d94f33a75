export { LockError, isLockError, type LockErrorCode } from './lock.error.js';
export { LockNotAcquiredError } from './lock-not-acquired.error.js';
export { LockLostError } from './lock-lost.error.js';
export { LockStoreError } from './lock-store.error.js';
export { LockConfigurationError } from './lock-configuration.error.js';
export { LockKeyError } from './lock-key.error.js';
export { LockNotReadyError } from './lock-not-ready.error.js';
export { IdempotencyKeyReusedError } from './idempotency-key-reused.error.js';
export { IdempotencyKeyInvalidError } from './idempotency-key-invalid.error.js';
