import type { ASTNode } from 'graphql';
import type { LockErrorPayload } from './lock-error-payload.js';
import { loadGraphQL } from './optional-peers.js';

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

/**
 * A `GraphQLError` for `payload` on the field of `info`: the payload's message, its code, retry hint and
 * resource in `extensions`, and no stack, so no server prints one into the response (contention is an
 * answer, not a crash). It carries its path already, so graphql-js reports it as it is.
 */
export async function graphQLLockError(payload: LockErrorPayload, info: GraphQLFieldInfo | undefined): Promise<Error> {
  const { GraphQLError } = await loadGraphQL();
  const { message, ...extensions } = payload;
  const error = new GraphQLError(message, {
    nodes: info?.fieldNodes as readonly ASTNode[] | undefined,
    path: info ? responsePath(info.path) : undefined,
    extensions,
  });
  Object.defineProperty(error, 'stack', { value: undefined, configurable: true, writable: true });
  return error;
}

function responsePath(path: GraphQLResponsePath | undefined): Array<string | number> {
  const keys: Array<string | number> = [];
  for (let step = path; step; step = step.prev) keys.unshift(step.key);
  return keys;
}
