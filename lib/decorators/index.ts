export { WithLock } from './with-lock.decorator.js';
export type { WithLockOptions } from '../interfaces/with-lock-options.interface.js';
export { Idempotent } from './idempotent.decorator.js';
export type { IdempotentOptions } from '../interfaces/idempotent-options.interface.js';
