/**
 * Injection token of the `LockStore` behind `LockService`: the store the module options ask for.
 * Override it in a test (`Test.createTestingModule(...).overrideProvider(LOCK_STORE).useValue(new
 * MemoryLockStore())`) or inject it to reach the store itself; a store given this way is never closed by the module.
 */
export const LOCK_STORE = Symbol('nestjs-lock:store');

/** Reflect metadata key under which `@WithLock` records its definition on the wrapped method. */
export const WITH_LOCK_METADATA = 'nestjs-lock:with-lock';

/** The path `RouterModule` gives a module (suffixed with the application id since Nest 10). */
export const NEST_MODULE_PATH_METADATA = '__module_path__';

/** `@nestjs/schedule`'s metadata keys of a scheduled method (stable across its releases for Nest 11 and 12). */
export const SCHEDULER_TYPE_METADATA = 'SCHEDULER_TYPE';
export const SCHEDULER_NAME_METADATA = 'SCHEDULER_NAME';
export const SCHEDULE_CRON_OPTIONS_METADATA = 'SCHEDULE_CRON_OPTIONS';
export const SCHEDULE_INTERVAL_OPTIONS_METADATA = 'SCHEDULE_INTERVAL_OPTIONS';

/** Reflect metadata key under which `@Leader` records its leadership on the method. */
export const LEADER_METADATA = 'nestjs-lock:leader';
