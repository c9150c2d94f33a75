import { LockNotAcquiredError } from '../../lib/index.js';
import { openNestLocks } from './nest-application.js';
import { ALL_ROLES, TTL, retryingSession, type Library } from './contender.js';

/** The name of this contender's rows, which the targets of the Nest path judge. */
export const SERVICE = 'nestjs-lock LockService';

/**
 * This project as a Nest user calls it: the `LockService` of `LockModule.forRoot({ redis })` in an application
 * context, `acquire(key, { ttl, wait, autoRenew: false })` with the options written at the call (a new object
 * each time), then `release()`. One application per process, shared by its workers.
 */
export const nestjsLockService: Library = {
  name: SERVICE,
  shared: true,
  roles: ALL_ROLES,
  kind: 'ours',
  waiting:
    'as nestjs-lock, through the LockService of a Nest application context (LockModule.forRoot({ redis })), ' +
    'options per call: { ttl: 30 s, wait: 10 s, autoRenew: false }',
  async open(url) {
    const { locks, close } = await openNestLocks(url);
    return retryingSession(
      (error) => error instanceof LockNotAcquiredError,
      async (key) => {
        const lock = await locks.acquire(key, { ttl: TTL, wait: 10_000, autoRenew: false });
        return { release: async () => void (await lock.release()) };
      },
      close,
    );
  },
};
