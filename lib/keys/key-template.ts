import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { KeyValueEncoder } from './key-encoding.js';

/** One `<...>` of a key template: `<dto.productId>` has the head `dto` and the path `['productId']`. */
export interface Placeholder {
  /** The text between `<` and `>`, e.g. `dto.productId`. */
  readonly text: string;
  /** The first segment: a parameter name, an argument index or a request source such as `query`. */
  readonly head: string;
  /** The property path after the head. */
  readonly path: readonly string[];
}

const PLACEHOLDER = /<([^<>]*)>/g;

/**
 * A parsed key template such as `'inventory:<productId>'` or `'pair:<a>:<b>'`: literal text and the
 * placeholders between it. Where each placeholder's value comes from is decided per method (see
 * `KeyResolver`); this class checks the shape of the template and writes values into it, encoded so that
 * distinct value tuples never give one key (see {@link KeyValueEncoder}).
 */
export class KeyTemplate {
  readonly placeholders: readonly Placeholder[];
  /** The literal texts around the placeholders: one more than there are placeholders. */
  readonly literals: readonly string[];
  private readonly encoder: KeyValueEncoder;

  /**
   * @param option what the template is, for messages: `@WithLock(Class.method) key`
   * @throws LockConfigurationError for a malformed template (empty, unbalanced, or two placeholders with nothing between them)
   */
  constructor(
    readonly template: string,
    option = '@WithLock key',
  ) {
    const invalid = (expectation: string) => new LockConfigurationError(option, template, expectation);
    if (typeof template !== 'string' || template.length === 0) throw invalid('expected a non-empty key template');
    if (/\p{Cs}/u.test(template)) throw invalid('it contains a lone UTF-16 surrogate, which has no UTF-8 form');
    const placeholders: Placeholder[] = [];
    const literals: string[] = [];
    let end = 0;
    for (const match of template.matchAll(PLACEHOLDER)) {
      const text = match[1];
      const segments = text.split('.');
      if (segments.some((segment) => segment.trim() === '' || segment !== segment.trim())) {
        throw invalid(`placeholder <${text}> must be a name or a dotted path like <dto.productId>`);
      }
      const literal = template.slice(end, match.index);
      if (placeholders.length > 0 && literal === '') {
        throw invalid(
          `placeholders <${placeholders[placeholders.length - 1].text}> and <${text}> need literal text between them ` +
            '(like <a>:<b>), or two value pairs could give one key',
        );
      }
      if (placeholders.length > 0 && literal.startsWith('%')) {
        throw invalid('the text between two placeholders must not begin with "%", the escape character of key values');
      }
      literals.push(literal);
      placeholders.push({ text, head: segments[0], path: segments.slice(1) });
      end = match.index + match[0].length;
    }
    literals.push(template.slice(end));
    if (literals.some((literal) => /[<>]/.test(literal))) {
      throw invalid('a "<" or ">" is not part of a <placeholder>');
    }
    this.placeholders = placeholders;
    this.literals = literals;
    this.encoder = new KeyValueEncoder(literals);
  }

  /**
   * The key for one value per placeholder, in order, each encoded.
   * @throws LockKeyError naming the placeholder when its value is missing, `null`, empty, an object or an array
   */
  render(values: readonly unknown[]): string {
    let key = this.literals[0];
    this.placeholders.forEach((placeholder, index) => {
      key += this.encoder.encode(this.scalar(placeholder, values[index])) + this.literals[index + 1];
    });
    return key;
  }

  private scalar(placeholder: Placeholder, value: unknown): string {
    if (typeof value === 'string' && value.length > 0) return value;
    if (
      (typeof value === 'number' && Number.isFinite(value)) ||
      typeof value === 'bigint' ||
      typeof value === 'boolean'
    ) {
      return String(value);
    }
    const message =
      `Lock key template "${this.template}": placeholder <${placeholder.text}> resolved to ${describe(value)}; ` +
      'it must be a non-empty string, a finite number or a boolean, so that one resource always maps to one lock.';
    // the message names the template, the placeholder and the kind of value, never the value itself
    throw new LockKeyError(message, this.template, { clientMessage: message });
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (value === '') return 'an empty string';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  return `a value of type ${typeof value === 'object' ? 'object' : typeof value}`;
}
