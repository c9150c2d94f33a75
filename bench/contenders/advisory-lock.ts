import { ALL_ROLES, retryingSession, type Library } from './contender.js';

/** The package's default export: a connection string in, a mutex per lock name out. */
type CreateMutex = (connectionString: string) => (name: string) => { lock(): Promise<() => Promise<void>> };

/** The default export, whether Node hands the CommonJS module over whole (`__esModule`) or its default alone. */
async function loadCreateMutex(): Promise<CreateMutex> {
  const loaded = (await import('advisory-lock')) as unknown as { default: CreateMutex | { default: CreateMutex } };
  return typeof loaded.default === 'function' ? loaded.default : loaded.default.default;
}

/**
 * `advisory-lock` (npm), a session advisory lock with its defaults: each `lock()` opens a connection of its own,
 * `pg_advisory_lock` on it, and `unlock()` runs `pg_advisory_unlock` and closes it.
 */
export const advisoryLock: Library = {
  name: 'advisory-lock',
  shared: true,
  roles: ALL_ROLES,
  kind: 'peer',
  waiting: "the server's lock queue: a waiter blocks inside `pg_advisory_lock` on a connection opened for it",
  async open(url) {
    const mutexes = (await loadCreateMutex())(url);
    return retryingSession(
      () => false,
      async (key) => ({ release: await mutexes(key).lock() }),
      async () => undefined,
    );
  },
};
