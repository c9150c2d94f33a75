/**
 * The optional peers each transport needs, loaded with `import()` the first time a handler of that transport
 * meets a lock error: an application that does not use a transport never needs its packages installed.
 * Each copy is the application's own, so `instanceof` checks in Nest and BullMQ see their own classes.
 */
let graphql: Promise<typeof import('graphql')> | undefined;
let websockets: Promise<typeof import('@nestjs/websockets')> | undefined;
let microservices: Promise<typeof import('@nestjs/microservices')> | undefined;
let bullmq: Promise<typeof import('bullmq')> | undefined;

/** `graphql` (for `GraphQLError`), installed with `@nestjs/graphql`. */
export function loadGraphQL(): Promise<typeof import('graphql')> {
  return (graphql ??= import('graphql'));
}

/** `@nestjs/websockets` (for `WsException`). */
export function loadWebSockets(): Promise<typeof import('@nestjs/websockets')> {
  return (websockets ??= import('@nestjs/websockets'));
}

/** `@nestjs/microservices` (for `RpcException`). */
export function loadMicroservices(): Promise<typeof import('@nestjs/microservices')> {
  return (microservices ??= import('@nestjs/microservices'));
}

/** `bullmq` (for `DelayedError`), installed with `@nestjs/bullmq`. */
export function loadBullMQ(): Promise<typeof import('bullmq')> {
  return (bullmq ??= import('bullmq'));
}
