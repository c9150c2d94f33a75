/**
 * Injection token of the `LockStore` behind `LockService`: the store the module options ask for.
 * Override it in a test (`Test.createTestingModule(...).overrideProvider(LOCK_STORE).useValue(new
 * MemoryLockStore())`) or inject it to reach the store itself; a store given this way is never closed by the module.
 */
export const LOCK_STORE = Symbol('nestjs-lock:store');

/** Reflect metadata key under which `@WithLock` records its definition on the wrapped method. */
export const WITH_LOCK_METADATA = 'nestjs-lock:with-lock';

/** Nest's own metadata keys that tell what kind of handler a method is (stable across Nest 11 and 12). */
export const NEST_PATH_METADATA = 'path';
export const NEST_METHOD_METADATA = 'method';
/** Where Nest's parameter decorators (`@Param('id')`, `@Body()`...) record a handler's parameters, on its class. */
export const NEST_ROUTE_ARGS_METADATA = '__routeArguments__';
/** Marks the parameter entries of custom decorators made with `createParamDecorator`. */
export const NEST_CUSTOM_ROUTE_ARGS_METADATA = '__customRouteArgs__';
/** The path `RouterModule` gives a module (suffixed with the application id since Nest 10). */
export const NEST_MODULE_PATH_METADATA = '__module_path__';

/** `@nestjs/bullmq`'s metadata key of a `@Processor` class. */
export const BULLMQ_PROCESSOR_METADATA = 'bullmq:processor_metadata';
/** `@nestjs/graphql`'s mark of a `@Query`, `@Mutation` or `@Subscription` method. */
export const NEST_GRAPHQL_RESOLVER_METADATA = 'graphql:resolver_type';
/** `@nestjs/graphql`'s mark of a `@ResolveField` method. */
export const NEST_GRAPHQL_FIELD_METADATA = 'graphql:resolve_property';
/** `@nestjs/microservices`' mark of a `@MessagePattern` or `@EventPattern` method. */
export const NEST_PATTERN_METADATA = 'microservices:pattern';
/** `@nestjs/websockets`' mark of a `@SubscribeMessage` method. */
export const NEST_MESSAGE_MAPPING_METADATA = 'websockets:message_mapping';

/** `@nestjs/schedule`'s metadata keys of a scheduled method (stable across its releases for Nest 11 and 12). */
export const SCHEDULER_TYPE_METADATA = 'SCHEDULER_TYPE';
export const SCHEDULER_NAME_METADATA = 'SCHEDULER_NAME';
export const SCHEDULE_CRON_OPTIONS_METADATA = 'SCHEDULE_CRON_OPTIONS';
export const SCHEDULE_INTERVAL_OPTIONS_METADATA = 'SCHEDULE_INTERVAL_OPTIONS';
