import type { Library, Role } from './contenders/contender.js';
import { floor } from './contenders/floor.js';
import { murlock } from './contenders/murlock.js';
import { advisoryLock } from './contenders/advisory-lock.js';
import { nestjsLockService } from './contenders/nestjs-lock-service.js';
import {
  nestjsLockFenced,
  nestjsLockGlide,
  nestjsLockIovalkey,
  nestjsLockNodeRedis,
  nestjsLockPerWorker,
  nestjsLockShared,
  nestjsLockUsing,
} from './contenders/nestjs-lock.js';
import { advisoryTransactionLockPool, nestjsLockPostgres } from './contenders/postgres.js';
import { redisSemaphore } from './contenders/redis-semaphore.js';
import { redlock } from './contenders/redlock.js';

export type { Held, Library, Role, Session } from './contenders/contender.js';
export { FLOOR_POLL_MS } from './contenders/floor.js';

/**
 * Every contender, in the order of the tables. A new one is a file in contenders/ and an entry here; its
 * `roles` say which scenarios it runs in.
 */
export const LIBRARIES: readonly Library[] = [
  floor,
  nestjsLockShared,
  nestjsLockService,
  nestjsLockUsing,
  nestjsLockFenced,
  nestjsLockPerWorker,
  nestjsLockNodeRedis,
  nestjsLockIovalkey,
  nestjsLockGlide,
  redlock,
  redisSemaphore,
  murlock,
];

/** The contenders of `npm run bench:postgres` on the Postgres server it starts (Redis is run by its own rows). */
export const POSTGRES_LIBRARIES: readonly Library[] = [nestjsLockPostgres, advisoryTransactionLockPool, advisoryLock];

/** This project's main row (one LockManager per process, acquire/release): what targets judge. */
export const OURS = nestjsLockShared.name;

/** The other libraries, each compared with ours by the targets. */
export const PEERS: readonly Library[] = LIBRARIES.filter((library) => library.kind === 'peer');

/** Contenders every table of a compared metric divides each row by (a `÷ name` column each). */
export const REFERENCES: readonly string[] = LIBRARIES.filter(
  (library) => library.kind !== 'ours' || library.name === OURS,
).map((library) => library.name);

/** The contenders that take part in scenarios of `role`. */
export function contendersFor(role: Role): Library[] {
  return LIBRARIES.filter((library) => library.roles.includes(role));
}

/** The contender of that name (how a forked worker finds what to run). */
export function libraryNamed(name: string): Library {
  const library = [...LIBRARIES, ...POSTGRES_LIBRARIES].find((candidate) => candidate.name === name);
  if (!library) throw new Error(`no library "${name}" in the bench`);
  return library;
}
