import type { IdempotentOptions } from '../interfaces/idempotent-options.interface.js';
import { KeyResolver } from '../keys/key-resolver.js';
import type { RequestFrame } from '../keys/key-sources.js';
import { KeyTemplate } from '../keys/key-template.js';
import { handlerSourcesOf } from '../transports/lock-transports.js';
import { resolveIdempotentSettings, type IdempotentSettings } from './idempotency-settings.js';

/**
 * What `@Idempotent()` recorded about one HTTP handler: its checked settings, and its `scope` template bound to
 * the handler's routes (at bootstrap, else at its first call).
 */
export class IdempotentHandler {
  readonly settings: IdempotentSettings;
  /** Where the decorator is, for messages: `@Idempotent(Class.method)`. */
  readonly option: string;
  private readonly scopeTemplate?: KeyTemplate;
  private readonly scopes = new WeakMap<object, KeyResolver>();

  /**
   * @param label `Class.method`
   * @throws LockConfigurationError for a bad option value, an unknown option name (with the closest known one)
   *   or a malformed `scope` template
   */
  constructor(
    readonly label: string,
    readonly methodName: string | symbol,
    options: IdempotentOptions,
  ) {
    this.option = `@Idempotent(${label})`;
    this.settings = resolveIdempotentSettings(options, label);
    if (this.settings.scope !== undefined) {
      this.scopeTemplate = new KeyTemplate(this.settings.scope, `${this.option}.scope`);
    }
  }

  /**
   * Binds the `scope` template to the handler as it is routed on `owner`: each placeholder must name a part of
   * the request (`<user.id>`, `<headers.x-tenant>`) or a route param every route of the handler has.
   * @throws LockConfigurationError naming the placeholder that could come from nowhere
   */
  prepare(owner: object, handler: object, modulePath?: string): void {
    if (!this.scopeTemplate || this.scopes.has(owner)) return;
    const sources = handlerSourcesOf({ owner, methodName: this.methodName, method: handler, modulePath });
    const method = { label: this.label, parameterNames: [], arity: 0, option: `${this.option}.scope` };
    this.scopes.set(owner, new KeyResolver(this.scopeTemplate, method, sources));
  }

  /**
   * The scope of one request (`''` without a `scope` option).
   * @throws LockKeyError when the request lacks a value the template reads (400 over HTTP)
   */
  scopeOf(owner: object, handler: object, frame: RequestFrame): string {
    if (!this.scopeTemplate) return '';
    this.prepare(owner, handler);
    return (this.scopes.get(owner) as KeyResolver).resolve([], frame);
  }
}
