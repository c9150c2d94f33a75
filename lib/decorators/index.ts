export { WithLock } from './with-lock.decorator.js';
export type { WithLockOptions } from '../interfaces/with-lock-options.interface.js';
export { Leader } from './leader.decorator.js';
export type { LeadershipOptions } from '../leadership/leadership-options.js';
export { Idempotent } from './idempotent.decorator.js';
export type { IdempotentOptions } from '../interfaces/idempotent-options.interface.js';
