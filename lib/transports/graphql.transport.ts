import type { ExecutionContext } from '@nestjs/common';
import type { ASTNode } from 'graphql';
import { of, throwError } from 'rxjs';
import type { LockError } from '../errors/lock.error.js';
import { frameSources, type RequestFrame } from '../keys/key-sources.js';
import type { LockErrorPayload } from './lock-error-payload.js';
import type { LockErrorMapping, LockTransport } from './lock-transport.interface.js';

/** `@nestjs/graphql`'s mark of a `@Query`, `@Mutation` or `@Subscription` method. */
const RESOLVER_METADATA = 'graphql:resolver_type';
/** `@nestjs/graphql`'s mark of a `@ResolveField` method. */
const FIELD_METADATA = 'graphql:resolve_property';

/** What a GraphQL lock error needs from the resolver's `info`: the field it belongs to and where it sits. */
export interface GraphQLFieldInfo {
  readonly fieldNodes: readonly unknown[];
  readonly path: GraphQLResponsePath;
}

/** graphql-js's `info.path`: the response path of the field, innermost first. */
export interface GraphQLResponsePath {
  readonly prev: GraphQLResponsePath | undefined;
  readonly key: string | number;
}

/** What the GraphQL mapping calls back into: `LockInterceptor.toGraphQLError`. */
export interface GraphQLErrorMapping extends LockErrorMapping {
  toGraphQLError(
    error: LockError,
    payload: LockErrorPayload | undefined,
    info: GraphQLFieldInfo | undefined,
  ): Error | Promise<Error>;
}

let graphql: Promise<typeof import('graphql')> | undefined;

/**
 * `graphql` (for `GraphQLError`), installed with `@nestjs/graphql`: loaded at the first lock error of a
 * resolver, so an application without GraphQL never needs it, and the application's own copy, whose
 * `instanceof` checks graphql-js makes.
 */
function loadGraphQL(): Promise<typeof import('graphql')> {
  return (graphql ??= import('graphql'));
}

/**
 * The default GraphQL error of a lock error, on the field of `info`: the payload's message, its code, retry hint
 * and resource in `extensions`, and no stack, so no server prints one into the response (contention is an
 * answer, not a crash). It carries its path already, so graphql-js reports it as it is. The error itself when
 * it has no payload.
 */
export async function graphQLLockError(
  error: LockError,
  payload: LockErrorPayload | undefined,
  info: GraphQLFieldInfo | undefined,
): Promise<Error> {
  if (!payload) return error;
  const { GraphQLError } = await loadGraphQL();
  const { message, ...extensions } = payload;
  const mapped = new GraphQLError(message, {
    nodes: info?.fieldNodes as readonly ASTNode[] | undefined,
    path: info ? responsePath(info.path) : undefined,
    extensions,
  });
  Object.defineProperty(mapped, 'stack', { value: undefined, configurable: true, writable: true });
  return mapped;
}

/**
 * GraphQL (Apollo, Mercurius): the headers and `user` of the HTTP request on the context for key templates,
 * and an error on the field for a lock error, which leaves the rest of the response alone. Nest runs a
 * `@ResolveField` without global interceptors unless `fieldResolverEnhancers` asks for them.
 */
export const graphQLTransport: LockTransport<GraphQLErrorMapping> = {
  type: 'graphql',
  serves: (context) => context.getType<string>() === 'graphql',
  frameOf: graphQLFrame,
  handlerSources: ({ method }) =>
    isMarked(method, RESOLVER_METADATA) ? frameSources('a GraphQL resolver', ['headers', 'user']) : undefined,
  mayRunUnserved: ({ method }) => isMarked(method, RESOLVER_METADATA) || isMarked(method, FIELD_METADATA),
  async mapError(error, { context }, mapping) {
    const info = context?.getArgByIndex<GraphQLFieldInfo | undefined>(3);
    const mapped = await mapping.toGraphQLError(error, mapping.payloadOf(error), info);
    if (mapped === error) return throwError(() => error);
    // the field's value: graphql-js reports a returned error as that field's error, and Nest's exception
    // handler, which logs every thrown error that is not an HttpException at ERROR, never sees it
    return of(mapped);
  },
};

interface HttpRequestLike {
  readonly headers?: unknown;
  readonly user?: unknown;
}

/**
 * The request a GraphQL resolver call serves, for `<headers.x>` and `<user.x>`: the HTTP request that Nest's
 * Apollo and Mercurius drivers put on the context as `req` (where a guard puts `user`). Read when a template
 * asks, after the guards ran.
 */
function graphQLFrame(context: ExecutionContext): RequestFrame | undefined {
  const request = context.getArgByIndex<{ req?: HttpRequestLike } | undefined>(2)?.req;
  if (!request) return undefined;
  return {
    get headers() {
      return request.headers;
    },
    get user() {
      return request.user;
    },
  };
}

function isMarked(method: object, key: string): boolean {
  return Reflect.getOwnMetadata(key, method) !== undefined;
}

function responsePath(path: GraphQLResponsePath | undefined): Array<string | number> {
  const keys: Array<string | number> = [];
  for (let step = path; step; step = step.prev) keys.unshift(step.key);
  return keys;
}
