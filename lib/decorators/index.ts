export { WithLock } from './with-lock.decorator.js';
export type { WithLockOptions } from '../interfaces/with-lock-options.interface.js';
export { Leader } from './leader.decorator.js';
export type { LeadershipOptions } from '../leadership/leadership-options.js';
