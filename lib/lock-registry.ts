import type { LockManager } from './core/lock-manager.js';
import type { LockErrorMappings } from './transports/lock-transports.js';

/**
 * Connects `@WithLock` methods to the LockService of their application. Decorators run before any
 * module exists, so the wrapper looks its service up at call time: first by the instance the method
 * runs on (bound when the module initialises), else the most recent ready service of the process, else the
 * most recent one built whose module has not initialised yet.
 */
const byInstance = new WeakMap<object, LockManager>();
const ready: LockManager[] = [];
/**
 * Services built, their modules not initialised yet. Nest's own order for a hybrid app starts its
 * microservices before `listen()` initialises the modules, and a message may come in between: such a
 * service serves it (an acquisition before the startup check waits for that check).
 */
const starting: LockManager[] = [];

/** Notes a service just built, for calls that come before its module initialised. */
export function noteStarting(service: LockManager): void {
  if (!starting.includes(service) && !ready.includes(service)) starting.push(service);
}

/** Marks a service ready for `@WithLock` methods. */
export function registerService(service: LockManager): void {
  remove(starting, service);
  if (!ready.includes(service)) ready.push(service);
}

/** Forgets a service (its application is shutting down, or failed to start). */
export function unregisterService(service: LockManager): void {
  remove(starting, service);
  remove(ready, service);
}

function remove(services: LockManager[], service: LockManager): void {
  const index = services.indexOf(service);
  if (index >= 0) services.splice(index, 1);
}

/** Binds a provider or controller instance to its application's service. */
export function bindInstance(instance: object, service: LockManager): void {
  byInstance.set(instance, service);
}

/**
 * The service for a method running on `instance` (its own, also while it shuts down), or `undefined` when no
 * LockModule was built.
 */
export function serviceFor(instance: unknown): LockManager | undefined {
  const bound = instance !== null && typeof instance === 'object' ? byInstance.get(instance) : undefined;
  // an instance of an application that is shutting down keeps its own service, which refuses new locks
  // (a store error: 503 over HTTP), and never borrows another application's
  if (bound) return bound;
  return ready[ready.length - 1] ?? starting[starting.length - 1];
}

const errorMappings = new WeakMap<LockManager, LockErrorMappings>();

/**
 * Makes `mappings` (the application's `LockInterceptor`) answer for the lock errors of the `@WithLock` methods of
 * `service` that no interceptor serves, unless some are bound already.
 */
export function bindErrorMappings(service: LockManager, mappings: LockErrorMappings): void {
  if (!errorMappings.has(service)) errorMappings.set(service, mappings);
}

/** Makes `mappings` answer for the `@WithLock` methods of `service`, in place of any bound before (a user's subclass wins). */
export function replaceErrorMappings(service: LockManager, mappings: LockErrorMappings): void {
  errorMappings.set(service, mappings);
}

/** The mappings of `service`'s `@WithLock` methods, if its application has a `LockInterceptor`. */
export function errorMappingsFor(service: LockManager): LockErrorMappings | undefined {
  return errorMappings.get(service);
}
