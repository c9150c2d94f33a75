/**
 * The ioredis types this package names, and the only place it imports them from. ioredis is an optional
 * peer: in an application without it they are `any` instead of an error (TS2307) in our typings, so the
 * memory store or a store of your own type-checks with `skipLibCheck: false`; with ioredis installed they
 * are its own types, unchanged. A hand-written declaration file, because `tsc` drops the comment below
 * from the declarations it emits; the build copies it beside them.
 */
// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- no other way to name an optional peer's types
// @ts-ignore TS2307 where the application has not installed ioredis
import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';

export type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions };
