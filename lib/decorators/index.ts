export { WithLock, type WithLockOptions } from './with-lock.decorator.js';
