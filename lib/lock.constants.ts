/** Reflect metadata key under which `@WithLock` records its definition on the wrapped method. */
export const WITH_LOCK_METADATA = 'nestjs-lock:with-lock';

/** Nest's own metadata keys that tell what kind of handler a method is (stable across Nest 11 and 12). */
export const NEST_PATH_METADATA = 'path';
export const NEST_METHOD_METADATA = 'method';
export const NEST_PATTERN_METADATA = 'microservices:pattern';
