import { REQUEST_SOURCES, type HandlerSources, type ParameterBinding } from './key-sources.js';
import { NEST_CUSTOM_ROUTE_ARGS_METADATA, NEST_PATH_METADATA, NEST_ROUTE_ARGS_METADATA } from '../lock.constants.js';
import { isHttpHandler } from './is-http-handler.js';
import { joinRoutes, routeParamNames } from './route-params.js';

/** Nest's `RouteParamtypes` that key templates tell apart; every other kind is `'other'`. */
const BINDING_BY_PARAMTYPE: Readonly<Record<number, ParameterBinding['source']>> = {
  0: 'request',
  3: 'body',
  4: 'query',
  5: 'params',
  6: 'headers',
};

/**
 * What Nest's metadata says about an HTTP handler's key sources: its routes (each module, controller and
 * method path), the route params they have, and what each parameter decorator binds. `undefined` when
 * `handler` is no HTTP handler.
 *
 * @param controller the class the handler runs on (its own or inherited routes and parameters)
 * @param modulePath the `RouterModule` path of the controller's module, if any
 */
export function httpHandlerSources(
  controller: object,
  methodName: string | symbol,
  handler: object,
  modulePath?: string,
): HandlerSources | undefined {
  if (!isHttpHandler(handler)) return undefined;
  const routes = joinRoutes([
    [modulePath ?? ''],
    pathsOf(Reflect.getMetadata(NEST_PATH_METADATA, controller)),
    pathsOf(Reflect.getOwnMetadata(NEST_PATH_METADATA, handler)),
  ]);
  const paramsByRoute = routes.map((route) => new Set(routeParamNames(route)));
  const someRouteParams = new Set(paramsByRoute.flatMap((params) => [...params]));
  const routeParams = new Set([...someRouteParams].filter((name) => paramsByRoute.every((p) => p.has(name))));
  return {
    kind: 'an HTTP handler',
    sources: REQUEST_SOURCES,
    routes,
    routeParams,
    someRouteParams,
    parameters: parameterBindings(Reflect.getMetadata(NEST_ROUTE_ARGS_METADATA, controller, methodName)),
  };
}

function pathsOf(metadata: unknown): string[] {
  if (Array.isArray(metadata)) return metadata.filter((path): path is string => typeof path === 'string');
  return typeof metadata === 'string' ? [metadata] : ['/'];
}

/** Nest records `{ "<paramtype>:<index>": { index, data } }`, custom decorators with a marked paramtype. */
function parameterBindings(metadata: unknown): (ParameterBinding | undefined)[] {
  const bindings: (ParameterBinding | undefined)[] = [];
  if (metadata === null || typeof metadata !== 'object') return bindings;
  for (const [key, entry] of Object.entries(metadata as Record<string, { index?: unknown; data?: unknown }>)) {
    const index = entry?.index;
    if (typeof index !== 'number') continue;
    const paramtype = key.slice(0, key.lastIndexOf(':'));
    const source = paramtype.includes(NEST_CUSTOM_ROUTE_ARGS_METADATA)
      ? 'other'
      : (BINDING_BY_PARAMTYPE[Number(paramtype)] ?? 'other');
    const field = typeof entry.data === 'string' ? entry.data : undefined;
    // Nest reads @Headers('X-Tenant') as the lower-case header, as Node names it
    bindings[index] = { source, field: source === 'headers' ? field?.toLowerCase() : field };
  }
  return bindings;
}
