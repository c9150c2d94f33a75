import { Redis } from 'ioredis';
import Redlock, { ExecutionError } from 'redlock';
import { ALL_ROLES, TTL, retryingSession, type Library } from './contender.js';

/** node-redlock with its defaults (10 retries, 200 ± 100 ms apart) on a single node. */
export const redlock: Library = {
  name: 'redlock',
  shared: false,
  roles: ALL_ROLES,
  kind: 'peer',
  waiting: 'defaults: retryCount 10, retryDelay 200 ms, retryJitter 100 ms; then ExecutionError (retried by the bench)',
  async open(url) {
    const client = new Redis(url);
    const instance = new Redlock([client]);
    // redlock emits every refused attempt as 'error'; without a listener the process would crash
    instance.on('error', () => undefined);
    return retryingSession(
      (error) => error instanceof ExecutionError,
      async (key) => {
        const lock = await instance.acquire([key], TTL);
        return { release: async () => void (await lock.release()) };
      },
      () => instance.quit(),
    );
  },
};
