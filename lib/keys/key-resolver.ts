import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import {
  isRequestSource,
  type HandlerSources,
  type ParameterBinding,
  type RequestFrame,
  type RequestSourceName,
} from './key-sources.js';
import type { KeyTemplate, Placeholder } from './key-template.js';

/** The method a key template belongs to, as `@WithLock` saw it. */
export interface KeyedMethod {
  /** `Class.method`, for messages. */
  readonly label: string;
  /** Parameter names by position (`undefined` for destructured ones). */
  readonly parameterNames: readonly (string | undefined)[];
  /** `Function.length` of the method. */
  readonly arity: number;
  /** The option the template is given in, for messages. @default `@WithLock(<label>) key` */
  readonly option?: string;
}

/** Where one placeholder's value is read: an argument, or a part of the request. */
type ValueReader =
  | { readonly from: 'argument'; readonly index: number; readonly path: readonly string[] }
  | { readonly from: RequestSourceName; readonly path: readonly string[] };

/**
 * A key template bound to one method: each placeholder has exactly one source, decided at bootstrap.
 * - `<name>`, `<name.path>`: the argument of that parameter, as the method receives it (after pipes); else
 *   the route param of that name, which every route of the handler must have (read through the parameter
 *   that takes it with `@Param('name')`, if one does, so after its pipes too);
 * - `<0>`, `<1.path>`: the argument at that index;
 * - `<params.x>`, `<query.x>`, `<body.x>`, `<headers.x>`, `<user.x>`: that part of the request.
 *
 * A placeholder that could come from two places, or from none, is a `LockConfigurationError` here, never
 * a guess at call time.
 */
export class KeyResolver {
  private readonly readers: readonly ValueReader[];

  /**
   * @param handler what the transport knows of the method as a handler; `undefined` for a method that
   *   serves no request (a provider method, a job)
   * @throws LockConfigurationError naming the class, the method and the placeholder
   */
  constructor(
    readonly template: KeyTemplate,
    private readonly method: KeyedMethod,
    handler: HandlerSources | undefined,
  ) {
    this.readers = template.placeholders.map((placeholder) => {
      const problem = (expectation: string) =>
        new LockConfigurationError(method.option ?? `@WithLock(${method.label}) key`, template.template, expectation);
      return readerFor(placeholder, method, handler, problem);
    });
  }

  /**
   * The key for one call.
   * @param frame the request this call serves, when the method is its handler
   * @throws LockKeyError when a value is missing or not a scalar, or the request it reads is not there
   */
  resolve(args: readonly unknown[], frame: RequestFrame | undefined): string {
    const values = this.readers.map((reader, index) => {
      if (reader.from === 'argument') return readPath(args[reader.index], reader.path);
      if (!frame) {
        throw new LockKeyError(
          `Lock key template "${this.template.template}": placeholder <${this.template.placeholders[index].text}> ` +
            `reads the request, and this call of ${this.method.label} serves none (it was not routed to it through LockInterceptor).`,
          this.template.template,
        );
      }
      return readPath(frame[reader.from], reader.path);
    });
    return this.template.render(values);
  }
}

/** What one placeholder needs to know to find its source, and how it reports a problem. */
interface Lookup {
  readonly placeholder: Placeholder;
  readonly method: KeyedMethod;
  readonly handler: HandlerSources | undefined;
  /** The position of the parameter named like the placeholder's head, or -1. */
  readonly position: number;
  /** `Class.method(a, b)`, for messages. */
  readonly signature: string;
  readonly problem: (expectation: string) => LockConfigurationError;
}

function readerFor(
  placeholder: Placeholder,
  method: KeyedMethod,
  handler: HandlerSources | undefined,
  problem: (expectation: string) => LockConfigurationError,
): ValueReader {
  const names = method.parameterNames;
  const lookup: Lookup = {
    placeholder,
    method,
    handler,
    problem,
    position: names.indexOf(placeholder.head),
    signature: `${method.label}(${names.map((name, i) => name ?? `<${i}>`).join(', ')})`,
  };
  if (/^\d+$/.test(placeholder.head)) return indexReader(lookup);
  if (isRequestSource(placeholder.head)) return requestReader(lookup, placeholder.head);
  return nameReader(lookup);
}

/** `<0>`, `<1.path>`: the argument at that index, which the method must have. */
function indexReader({ placeholder, method, signature, problem }: Lookup): ValueReader {
  const { head, path, text } = placeholder;
  const count = Math.max(method.arity, method.parameterNames.length);
  if (Number(head) >= count)
    throw problem(`placeholder <${text}> names argument ${head}, and ${signature} has ${count}`);
  return { from: 'argument', index: Number(head), path };
}

/** `<params.x>`, `<query.x>`...: that part of the request, on a handler that has it and no parameter of that name. */
function requestReader(lookup: Lookup, source: RequestSourceName): ValueReader {
  const { placeholder, method, handler, position, signature, problem } = lookup;
  const { path, text } = placeholder;
  if (!handler) {
    // a method that serves no request: a parameter named `user` is just that parameter
    if (position >= 0) return { from: 'argument', index: position, path };
    throw problem(
      `placeholder <${text}> reads the request, and ${method.label} is not a request handler (it serves no request); ` +
        `use one of its parameters: ${signature}`,
    );
  }
  if (position >= 0) {
    throw problem(
      `placeholder <${text}> could be the request's ${source} or the parameter "${source}" of ${signature}; ` +
        `rename the parameter (then <${source}.x> is the request's), or write <${[position, ...path].join('.')}> for the argument`,
    );
  }
  if (!handler.sources.includes(source)) throw problem(`placeholder <${text}>: ${handler.kind} has no ${source}`);
  if (path.length === 0) throw problem(`placeholder <${text}> needs a field, like <${source}.id>`);
  if (source === 'headers' && path[0] !== path[0].toLowerCase()) {
    throw problem(
      `placeholder <${text}>: header names are lower-case in Node; write <headers.${path[0].toLowerCase()}>`,
    );
  }
  if (source === 'params' && !handler.routeParams.has(path[0])) throw problem(notEveryRoute(text, path[0], handler));
  return { from: source, path };
}

/** `<name>`, `<name.path>`: the argument of that parameter, else the route param of that name. */
function nameReader({ placeholder, method, handler, position, signature, problem }: Lookup): ValueReader {
  const { head, path, text } = placeholder;
  if (position >= 0) {
    const binding = handler?.parameters[position];
    if (handler?.someRouteParams.has(head) && !isRouteParam(binding, head)) {
      throw problem(
        `placeholder <${text}> could be the parameter "${head}" (${describeBinding(binding)}) or the route param :${head} ` +
          `of ${route(handler)}; bind the parameter with @Param('${head}'), or write <params.${head}> or <${position}> to say which`,
      );
    }
    return { from: 'argument', index: position, path };
  }
  if (!handler) {
    throw problem(
      `placeholder <${text}> matches no parameter of ${signature}; ` +
        'use a parameter name, an index like <0>, a path like <0.productId>, or a key function',
    );
  }
  if (!handler.routeParams.has(head)) {
    if (handler.someRouteParams.has(head)) throw problem(notEveryRoute(text, head, handler));
    throw problem(`placeholder <${text}> matches no parameter of ${signature} and no route param of ${route(handler)}`);
  }
  // the handler's own value of the route param, after its pipes (`@Param('id', ParseIntPipe) docId`), when
  // one parameter takes it; two that take it may disagree
  const bound = handler.parameters.flatMap((binding, index) => (isRouteParam(binding, head) ? [index] : []));
  if (bound.length > 1) {
    throw problem(
      `placeholder <${text}>: the route param :${head} goes to ${bound.length} parameters of ${signature}, which may ` +
        `receive it differently; name the parameter (<${method.parameterNames[bound[0]] ?? bound[0]}>) or write <params.${head}> for the raw value`,
    );
  }
  if (bound.length === 1) return { from: 'argument', index: bound[0], path };
  return { from: 'params', path: [head, ...path] };
}

function isRouteParam(binding: ParameterBinding | undefined, name: string): boolean {
  return binding?.source === 'params' && binding.field === name;
}

/** Nest's decorator for each request part, for messages. */
const DECORATORS: Partial<Record<RequestSourceName, string>> = {
  params: 'Param',
  query: 'Query',
  body: 'Body',
  headers: 'Headers',
};

function describeBinding(binding: ParameterBinding | undefined): string {
  if (!binding) return 'which has no parameter decorator';
  if (binding.source === 'other') return 'from a custom decorator';
  if (binding.source === 'request') return 'the whole request';
  const decorator = DECORATORS[binding.source];
  const field = binding.field === undefined ? '' : `'${binding.field}'`;
  return decorator ? `@${decorator}(${field})` : `from the request's ${binding.source}`;
}

function route(handler: HandlerSources): string {
  if (handler.routes.length === 0) return 'the handler';
  return handler.routes.length === 1 ? handler.routes[0] : `its routes ${handler.routes.join(', ')}`;
}

function notEveryRoute(text: string, name: string, handler: HandlerSources): string {
  const where = handler.someRouteParams.has(name) ? 'is not in every route' : 'is in no route';
  return `placeholder <${text}>: the route param :${name} ${where} of ${route(handler)}`;
}

/**
 * The value at `path` inside `root`. Inherited properties count (getters of a class, as ORM entities have
 * them), except those every object inherits (`constructor`, `__proto__`, `toString`...).
 */
function readPath(root: unknown, path: readonly string[]): unknown {
  let current = root;
  for (const part of path) {
    if (current === null || typeof current !== 'object') return undefined;
    if (!Object.hasOwn(current, part) && (!(part in current) || part in Object.prototype)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}
