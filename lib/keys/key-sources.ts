/**
 * Where the values of `@WithLock` key placeholders come from, besides the method's own arguments: the
 * request a handler serves. Each transport describes its handlers once at bootstrap ({@link HandlerSources})
 * and hands the request of each call over as a {@link RequestFrame}; key resolution knows nothing else of
 * HTTP, GraphQL, WebSocket or RPC.
 */

/** The parts of a request a template may name explicitly: `<params.id>`, `<headers.x-tenant>`, `<user.id>`... */
export const REQUEST_SOURCES = ['params', 'query', 'body', 'headers', 'user'] as const;

/** One of {@link REQUEST_SOURCES}. */
export type RequestSourceName = (typeof REQUEST_SOURCES)[number];

/** Whether `word` names a request source. */
export function isRequestSource(word: string): word is RequestSourceName {
  return (REQUEST_SOURCES as readonly string[]).includes(word);
}

/**
 * The request of one call, as key templates read it: route params, query, body, headers (lower-case
 * names, as Node gives them) and the principal a guard put on the request. Read only when the template names
 * a part, so a transport may hand over getters.
 */
export type RequestFrame = { readonly [source in RequestSourceName]?: unknown };

/** What a handler's parameter receives, as far as key templates care (from Nest's parameter decorators). */
export interface ParameterBinding {
  /** The request part it is taken from, `'request'` for the whole request, `'other'` for a custom decorator. */
  readonly source: RequestSourceName | 'request' | 'other';
  /** The field within it (`'id'` for `@Param('id')`), or `undefined` for the whole part (`@Param()`). */
  readonly field?: string;
}

/** What a transport knows at bootstrap about one handler, to check its key templates before any call. */
export interface HandlerSources {
  /** What the handler is, for messages: `'an HTTP handler'`. */
  readonly kind: string;
  /** The request parts its frames have. */
  readonly sources: readonly RequestSourceName[];
  /** The routes that reach it, for messages (`['/docs/:id']`). */
  readonly routes: readonly string[];
  /** Route params that every route has: a bare `<name>` may read these. */
  readonly routeParams: ReadonlySet<string>;
  /** Route params that some route has (a superset of {@link routeParams}). */
  readonly someRouteParams: ReadonlySet<string>;
  /** What each parameter is bound to, by position (`undefined`: nothing the transport fills). */
  readonly parameters: readonly (ParameterBinding | undefined)[];
}

const NO_ROUTE_PARAMS: ReadonlySet<string> = new Set();

/**
 * The sources of a handler whose frame has `sources` and that has no routes and no parameters bound to a
 * request part: a GraphQL resolver, a WebSocket message handler.
 * @param kind what the handler is, for messages: `'a GraphQL resolver'`
 */
export function frameSources(kind: string, sources: readonly RequestSourceName[]): HandlerSources {
  return { kind, sources, routes: [], routeParams: NO_ROUTE_PARAMS, someRouteParams: NO_ROUTE_PARAMS, parameters: [] };
}
