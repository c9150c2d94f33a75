import type { LockManager } from './core/lock-manager.js';

/**
 * Connects `@WithLock` methods to the LockService of their application. Decorators run before any
 * module exists, so the wrapper looks its service up at call time: first by the instance the method
 * runs on (bound when the module initialises), else the most recent ready service of the process.
 */
const byInstance = new WeakMap<object, LockManager>();
const ready: LockManager[] = [];

/** Marks a service ready for `@WithLock` methods. */
export function registerService(service: LockManager): void {
  if (!ready.includes(service)) ready.push(service);
}

/** Forgets a service (its application is shutting down). */
export function unregisterService(service: LockManager): void {
  const index = ready.indexOf(service);
  if (index >= 0) ready.splice(index, 1);
}

/** Binds a provider or controller instance to its application's service. */
export function bindInstance(instance: object, service: LockManager): void {
  byInstance.set(instance, service);
}

/** The service for a method running on `instance` (its own, also while it shuts down), or `undefined` when no LockModule is ready. */
export function serviceFor(instance: unknown): LockManager | undefined {
  const bound = instance !== null && typeof instance === 'object' ? byInstance.get(instance) : undefined;
  // an instance of an application that is shutting down keeps its own service, which refuses new locks
  // (a store error: 503 over HTTP), and never borrows another application's
  if (bound) return bound;
  return ready[ready.length - 1];
}

/** The transports whose handlers a `LockInterceptor` may not be around, so `@WithLock` maps for it. */
export type UnservedTransport = 'rpc' | 'ws' | 'graphql';

/**
 * What turns the lock errors of `@WithLock` methods that no interceptor sees into their transport's answers:
 * the application's `LockInterceptor`.
 */
export interface LockErrorMapper {
  /** What a BullMQ job processor throws for `error`. */
  jobError(error: Error, job: unknown, token: string | undefined): Promise<Error>;
  /**
   * What a handler of `transport` that no `LockInterceptor` serves fails with for `error`; for GraphQL, the
   * error the resolver returns as its field's value (`error` itself: rethrown).
   */
  transportError(transport: UnservedTransport, error: Error): Promise<Error>;
}

const errorMappers = new WeakMap<LockManager, LockErrorMapper>();

/** Makes `mapper` answer for the `@WithLock` methods of `service`, unless one is bound already. */
export function bindErrorMapper(service: LockManager, mapper: LockErrorMapper): void {
  if (!errorMappers.has(service)) errorMappers.set(service, mapper);
}

/** Makes `mapper` answer for the `@WithLock` methods of `service`, in place of any bound before (a user's subclass wins). */
export function replaceErrorMapper(service: LockManager, mapper: LockErrorMapper): void {
  errorMappers.set(service, mapper);
}

/** The mapper of `service`'s `@WithLock` methods, if its application has a `LockInterceptor`. */
export function errorMapperFor(service: LockManager): LockErrorMapper | undefined {
  return errorMappers.get(service);
}
