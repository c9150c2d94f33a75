import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';

/** Where placeholder values come from when a locked method runs. */
export interface KeySources {
  /** The method's arguments, in order. */
  readonly args: readonly unknown[];
  /** Parameter names of the method, by position (`undefined` for destructured ones). */
  readonly parameterNames: readonly (string | undefined)[];
  /** For HTTP handlers: route params, query and body, searched in that order before the arguments. */
  readonly request?: { readonly params?: unknown; readonly query?: unknown; readonly body?: unknown };
}

interface Placeholder {
  /** The text between `<` and `>`, e.g. `dto.productId`. */
  readonly source: string;
  readonly path: readonly string[];
}

const PLACEHOLDER = /<([^<>]*)>/g;

/**
 * A parsed key template such as `'inventory:<productId>'` or `'order:<0.id>'`. A placeholder names a
 * route param, query or body field (HTTP handlers), a parameter of the method, or an argument index,
 * followed by an optional property path.
 */
export class KeyTemplate {
  readonly placeholders: readonly Placeholder[];

  /** @throws LockConfigurationError for a malformed template (empty or unbalanced placeholder) */
  constructor(readonly template: string) {
    if (typeof template !== 'string' || template.length === 0) {
      throw new LockConfigurationError('@WithLock key', template, 'expected a non-empty key template');
    }
    const placeholders: Placeholder[] = [];
    for (const match of template.matchAll(PLACEHOLDER)) {
      const path = match[1].split('.');
      if (path.some((part) => part.trim() === '' || part !== part.trim())) {
        throw new LockConfigurationError(
          '@WithLock key',
          template,
          `placeholder <${match[1]}> must be a name or a dotted path like <dto.productId>`,
        );
      }
      placeholders.push({ source: match[1], path });
    }
    if (/[<>]/.test(template.replace(PLACEHOLDER, ''))) {
      throw new LockConfigurationError('@WithLock key', template, 'a "<" or ">" is not part of a <placeholder>');
    }
    this.placeholders = placeholders;
  }

  /** The placeholders whose first segment is neither a parameter name nor an argument index. */
  unmatched(parameterNames: readonly (string | undefined)[], arity: number): Placeholder[] {
    return this.placeholders.filter(({ path }) => {
      const head = path[0];
      if (/^\d+$/.test(head)) return Number(head) >= arity;
      return !parameterNames.includes(head);
    });
  }

  /**
   * Fills every placeholder from `sources`.
   * @throws LockKeyError naming the placeholder when its value is missing, `null`, empty, an object or an array
   */
  resolve(sources: KeySources): string {
    if (this.placeholders.length === 0) return this.template;
    let index = 0;
    return this.template.replace(PLACEHOLDER, () => this.render(this.placeholders[index++], sources));
  }

  private render(placeholder: Placeholder, sources: KeySources): string {
    const value = lookup(placeholder.path, sources);
    if (typeof value === 'string' && value.length > 0) return value;
    if (
      (typeof value === 'number' && Number.isFinite(value)) ||
      typeof value === 'bigint' ||
      typeof value === 'boolean'
    ) {
      return String(value);
    }
    throw new LockKeyError(
      `Lock key template "${this.template}": placeholder <${placeholder.source}> resolved to ${describe(value)}; ` +
        'it must be a non-empty string, a finite number or a boolean, so that one resource always maps to one lock.',
      this.template,
    );
  }
}

function lookup(path: readonly string[], sources: KeySources): unknown {
  const [head, ...rest] = path;
  for (const root of rootsFor(head, sources)) {
    if (root === undefined) continue;
    return walk(root, rest);
  }
  return undefined;
}

function* rootsFor(head: string, sources: KeySources): Generator<unknown> {
  const request = sources.request;
  if (request) {
    for (const bag of [request.params, request.query, request.body]) {
      if (bag !== null && typeof bag === 'object' && Object.hasOwn(bag, head))
        yield (bag as Record<string, unknown>)[head];
    }
  }
  if (/^\d+$/.test(head)) yield sources.args[Number(head)];
  const position = sources.parameterNames.indexOf(head);
  if (position >= 0) yield sources.args[position];
}

function walk(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const part of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, part)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing (no route param, query or body field, argument or property by that name)';
  if (value === null) return 'null';
  if (value === '') return 'an empty string';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  return `a value of type ${typeof value === 'object' ? 'object' : typeof value}`;
}
