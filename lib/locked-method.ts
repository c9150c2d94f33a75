import { LockConfigurationError } from './errors/lock-configuration.error.js';
import { LockKeyError } from './errors/lock-key.error.js';
import type { LockOptions } from './interfaces/lock-options.interface.js';
import type { LockManager } from './lock-manager.js';
import { currentRequest } from './lock-context.js';
import { KeyTemplate } from './utils/key-template.js';
import { MAX_LABEL_LENGTH, type LockSettings } from './utils/lock-settings.js';

/**
 * The key(s) of a `@WithLock` method: a template, an array of templates, or a function that receives
 * the method's arguments (with `this` the instance) and returns the key or keys.
 */
export type LockKeySpec =
  | string
  | readonly string[]
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the method's own parameters, whatever they are
  | ((this: any, ...args: any[]) => string | readonly string[]);

/** What `@WithLock` recorded about one method. */
export interface LockedMethodDefinition {
  /** `Class.method`, for messages and as the holder's label in `inspect()`. */
  readonly label: string;
  readonly key: LockKeySpec;
  readonly options: LockOptions;
  readonly onContention: 'throw' | 'skip';
  /** Minimum hold in ms after the call started (0: release at once). */
  readonly holdAtLeast: number;
  readonly parameterNames: readonly (string | undefined)[];
  readonly arity: number;
}

/**
 * A method guarded by `@WithLock`: resolves its keys per call, runs it in a locked scope of the
 * application's LockService, and applies the contention policy. Stored as the wrapper's metadata so the
 * module can check it at bootstrap.
 */
export class LockedMethod {
  private readonly templates?: readonly KeyTemplate[];
  private readonly settingsByService = new WeakMap<LockManager, LockSettings>();

  constructor(readonly definition: LockedMethodDefinition) {
    const { key } = definition;
    if (typeof key === 'string') this.templates = [new KeyTemplate(key)];
    else if (Array.isArray(key)) {
      if (key.length === 0)
        throw new LockConfigurationError(`@WithLock(${definition.label}) key`, key, 'expected at least one key');
      this.templates = key.map((template: string) => new KeyTemplate(template));
    } else if (typeof key !== 'function') {
      throw new LockConfigurationError(
        `@WithLock(${definition.label}) key`,
        key,
        'expected a template string, an array of them, or a function',
      );
    }
  }

  /**
   * Placeholders that can never resolve for this method: those naming neither a parameter nor an
   * argument index. None for an HTTP handler, whose query and body fields cannot be known before a request.
   */
  unresolvablePlaceholders(isHttpHandler: boolean): string[] {
    if (isHttpHandler) return [];
    const { parameterNames, arity } = this.definition;
    return (this.templates ?? []).flatMap((template) =>
      template.unmatched(parameterNames, arity).map((p) => `<${p.source}>`),
    );
  }

  /**
   * Runs `call` under the lock(s) of this method, per its policy. Placeholders read the request being
   * handled only when this method is its handler: a provider method called during a request has its own
   * arguments, which a route param or body field of the same name must not replace.
   */
  async invoke<T>(
    service: LockManager,
    instance: unknown,
    args: unknown[],
    call: () => T | Promise<T>,
    httpHandler = false,
  ): Promise<T | undefined> {
    const keys = this.keysFor(instance, args, httpHandler);
    const settings = this.settingsFor(service);
    const keyTemplateOf = settings.metricKey === undefined ? this.keyTemplates(keys) : undefined;
    return service.runLocked(keys, settings, call, {
      holdAtLeast: this.definition.holdAtLeast,
      keyTemplateOf,
      onContention:
        this.definition.onContention === 'skip'
          ? (error) => {
              service.reportSkip(this.definition.label, error, keyTemplateOf?.(error.key) ?? settings.metricKey);
              return undefined;
            }
          : undefined,
    });
  }

  /**
   * The name each key is reported under in events, metrics and spans: the template it came from. A single
   * template is in the settings already; a key function has none, so its keys go by `Class.method`.
   */
  private keyTemplates(keys: readonly string[]): ((key: string) => string | undefined) | undefined {
    const templates = this.templates;
    if (!templates || templates.length < 2) return undefined;
    return (key) => templates[keys.indexOf(key)]?.template;
  }

  private keysFor(instance: unknown, args: unknown[], httpHandler: boolean): string[] {
    const { key, parameterNames } = this.definition;
    if (this.templates) {
      const sources = { args, parameterNames, request: httpHandler ? currentRequest() : undefined };
      return this.templates.map((template) => template.resolve(sources));
    }
    const produced = (key as (...a: unknown[]) => unknown).apply(instance, args);
    const keys = typeof produced === 'string' ? [produced] : produced;
    if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k === 'string' && k.length > 0)) {
      throw new LockKeyError(
        `The key function of @WithLock on ${this.definition.label} returned ${Array.isArray(produced) ? 'an array with an empty or non-string entry' : typeof produced}; expected a non-empty string or a non-empty array of them.`,
      );
    }
    return keys;
  }

  private settingsFor(service: LockManager): LockSettings {
    let settings = this.settingsByService.get(service);
    if (!settings) {
      // the holder shows up in inspect() as Class.method and in metrics by its key template, unless the
      // options name them otherwise
      const { label } = this.definition;
      const metricKey = this.templates ? (this.templates.length === 1 ? this.templates[0].template : undefined) : label;
      settings = service.resolve({
        label: label.slice(0, MAX_LABEL_LENGTH),
        ...(metricKey === undefined ? {} : { metricKey: metricKey.slice(0, MAX_LABEL_LENGTH) }),
        ...this.definition.options,
      });
      this.settingsByService.set(service, settings);
    }
    return settings;
  }
}
