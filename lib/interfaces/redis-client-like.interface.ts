/**
 * A node-redis client (`createClient()` or `createCluster()` of the `redis` package, 5 or 6), connected or
 * not, recognised by its shape: no import of `redis` types, so the typings compile without it installed.
 */
export interface NodeRedisClientLike {
  sendCommand(...args: never[]): unknown;
  duplicate(...args: never[]): unknown;
  connect(): unknown;
  readonly isOpen: boolean;
}

/**
 * A Valkey GLIDE 2.x client (`GlideClient` or `GlideClusterClient` of `@valkey/valkey-glide`), recognised by
 * its shape: no import of GLIDE types, so the typings compile without it installed.
 */
export interface GlideClientLike {
  customCommand(...args: never[]): unknown;
  close(...args: never[]): unknown;
}
