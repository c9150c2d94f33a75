export { WithLock } from './with-lock.decorator.js';
export type { WithLockOptions } from '../interfaces/with-lock-options.interface.js';
