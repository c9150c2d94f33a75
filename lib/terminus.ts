// The `nestjs-lock/terminus` entry point: the only module that needs `@nestjs/terminus` (an optional peer).
export { LockHealthIndicator } from './health/lock.health-indicator.js';
export type { LockStoreCheckOptions, LockStoreStatus } from './health/check-lock-store.js';
