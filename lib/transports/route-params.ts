const ROUTE_PARAM = /(\\?)[:*](?:"((?:[^"\\]|\\.)+)"|([\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*))/gu;

/**
 * The names of the route params in a Nest route path: `:id`, `:id?`, `:id(\\d+)`, `:"quoted name"` and
 * named wildcards `*path`, as Express (path-to-regexp) and Fastify (find-my-way) write them. An escaped
 * `\\:` is literal text.
 */
export function routeParamNames(path: string): string[] {
  const names: string[] = [];
  for (const match of path.matchAll(ROUTE_PARAM)) {
    if (match[1]) continue;
    names.push(match[2]?.replace(/\\(.)/g, '$1') ?? match[3]);
  }
  return names;
}

/**
 * Every full route of a handler, from the paths of each level (module, controller, method), any of which
 * may offer several: `[['orgs/:org'], ['a', 'b'], [':id']]` gives `/orgs/:org/a/:id` and `/orgs/:org/b/:id`.
 */
export function joinRoutes(levels: readonly (readonly string[])[]): string[] {
  let routes = [''];
  for (const paths of levels) {
    routes = routes.flatMap((route) => paths.map((path) => `${route}/${path}`));
  }
  return routes.map((route) => `/${route.split('/').filter(Boolean).join('/')}`);
}
