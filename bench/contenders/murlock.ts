import { ALL_ROLES, TTL, heldByCallback, retryingSession, type Library } from './contender.js';

/** The retry options of murlock's README example (`MurLockModule.forRoot`): there are no built-in defaults. */
const WAIT_MS = 1000;
const MAX_ATTEMPTS = 3;

/**
 * murlock's MurLockService, made as its module makes it (options, an AsyncStorageService over its own
 * AsyncLocalStorage) and driven through `runWithLock()`, the call its `@MurLock` decorator wraps a method in.
 * It brings its own client (node-redis 4, not ioredis) and sends each script whole by EVAL. Loaded only when
 * opened: it is CommonJS and requires NestJS 12 (ESM), which Node does by default only from 20.19 on, so on an
 * older Node only its rows fail, not the bench.
 */
export const murlock: Library = {
  name: 'murlock',
  shared: false,
  roles: ALL_ROLES,
  kind: 'peer',
  waiting:
    `runWithLock() with the README's options: wait ${WAIT_MS} ms, maxAttempts ${MAX_ATTEMPTS} (sleeps ` +
    `${WAIT_MS} ms × attempt between tries, then MurLockException, retried by the bench), blocking off; ` +
    "logLevel 'error' (its 'log' would print every grant); its own node-redis 4 client",
  async open(url) {
    const { MurLockException, MurLockService } = await import('murlock');
    const { AsyncStorageManager } = await import('murlock/dist/als/als-manager.js');
    const { AsyncStorageService } = await import('murlock/dist/als/als.service.js');
    const service = new MurLockService(
      {
        redisOptions: { url },
        wait: WAIT_MS,
        maxAttempts: MAX_ATTEMPTS,
        logLevel: 'error',
        ignoreUnlockFail: false,
        failFastOnRedisError: false,
        blocking: false,
      },
      new AsyncStorageService(new AsyncStorageManager<string>()),
    );
    await service.onModuleInit();
    return retryingSession(
      (error) => error instanceof MurLockException,
      (key) => heldByCallback((inside) => service.runWithLock(key, TTL, inside)),
      () => service.onApplicationShutdown(),
    );
  },
};
