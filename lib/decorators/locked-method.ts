import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { LockStoreError } from '../errors/lock-store.error.js';
import type { LockSectionOptions } from '../interfaces/lock-options.interface.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import type { PermitShape } from '../interfaces/permit-store.interface.js';
import { checkPermitShape } from '../options/permit-shape.js';
import { permitStoreOf } from '../core/permits/permit-store-of.js';
import type { LockManager } from '../core/lock-manager.js';
import { KeyResolver } from '../keys/key-resolver.js';
import { requestFor } from '../core/lock-context.js';
import { handlerSourcesOf } from '../transports/lock-transports.js';
import { KeyTemplate } from '../keys/key-template.js';
import { MAX_LABEL_LENGTH, type LockSettings } from '../options/lock-settings.js';
import type { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { scheduleOf } from '../schedule/method-schedule.js';
import { ScheduledRuns } from '../schedule/scheduled-runs.js';
import type { SchedulerJobs } from '../schedule/scheduler-jobs.js';
import { runOncePerTick, tickClaimKey } from '../schedule/tick-claim.js';

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
  /** The class that declares the method, and the method's name on it. */
  readonly declaringClass: object;
  readonly methodName: string | symbol;
  readonly key: LockKeySpec;
  readonly options: LockSectionOptions;
  /** What a call does on contention; when not given, a scheduled method skips and any other throws. */
  readonly onContention?: 'throw' | 'skip';
  /**
   * Minimum hold in ms after the call started (0: release at once); when not given, a scheduled method's run
   * claims its tick instead.
   */
  readonly holdAtLeast?: number;
  readonly parameterNames: readonly (string | undefined)[];
  readonly arity: number;
}

/** One call of a `@WithLock` method, as the wrapper sees it. */
export interface LockedCall<T> {
  /** The `this` of the call. */
  readonly instance: unknown;
  readonly args: unknown[];
  /** Runs the original method with the call's `this` and arguments. */
  readonly run: () => T | Promise<T>;
  /** The method as Nest sees it (the `@WithLock` wrapper). */
  readonly handler: object;
}

/** What a method is bound to on one class: its key resolvers, and its schedule when it has one. */
interface MethodBinding {
  readonly resolvers: readonly KeyResolver[];
  readonly runs?: ScheduledRuns;
}

/**
 * A method guarded by `@WithLock`: resolves its keys per call, runs it in a locked scope of the
 * application's LockService, and applies the contention policy; a scheduled method's run claims its tick (see `runOncePerTick`). Stored as the wrapper's metadata so the
 * module can check it at bootstrap.
 */
export class LockedMethod {
  private readonly templates?: readonly KeyTemplate[];
  private readonly settingsByService = new WeakMap<LockManager, LockSettings>();
  private readonly claimSettingsByService = new WeakMap<LockManager, LockSettings>();
  private readonly bindings = new WeakMap<object, MethodBinding>();

  constructor(readonly definition: LockedMethodDefinition) {
    const { key } = definition;
    const option = `@WithLock(${definition.label}) key`;
    if (typeof key === 'string') this.templates = [new KeyTemplate(key, option)];
    else if (Array.isArray(key)) {
      if (key.length === 0) throw new LockConfigurationError(option, key, 'expected at least one key');
      this.templates = key.map((template: string) => new KeyTemplate(template, option));
    } else if (typeof key !== 'function') {
      throw new LockConfigurationError(option, key, 'expected a template string, an array of them, or a function');
    }
  }

  /**
   * Binds the key templates to the method as it runs on `owner` (its class, or a subclass with routes of
   * its own), and checks that every placeholder has exactly one source; reads the method's schedule
   * (`@Cron`, `@Interval`, `@Timeout`), if any. The module does this at bootstrap for every provider and
   * controller; a class it never saw is bound at its first call.
   * @param handler the method as Nest sees it, carrying its route and schedule metadata
   * @param modulePath the `RouterModule` path of the controller's module, if any
   * @param jobs the application's scheduler, where a `@Cron` method's times are computed
   * @throws LockConfigurationError naming the class, the method and the placeholder
   */
  prepare(owner: object, handler: object, modulePath?: string, jobs?: SchedulerJobs): void {
    if (this.bindings.has(owner)) return;
    const { methodName } = this.definition;
    const schedule = scheduleOf(handler);
    let resolvers: readonly KeyResolver[] = [];
    if (this.templates) {
      const sources = handlerSourcesOf({ owner, methodName, method: handler, modulePath });
      resolvers = this.templates.map((template) => new KeyResolver(template, this.definition, sources));
    }
    this.bindings.set(owner, { resolvers, ...(schedule ? { runs: new ScheduledRuns(schedule, jobs) } : {}) });
  }

  /**
   * Checks that `store` keeps the permits this method asks for (`limit` or `mode`); the module does this at
   * bootstrap, so a semaphore on a store that cannot count its holders never starts.
   * @throws LockConfigurationError naming `@WithLock(Class.method).limit` (or `.mode`) when it cannot
   */
  checkPermits(store: LockStore): void {
    const { limit, mode } = this.definition.options;
    if (limit === undefined && mode === undefined) return;
    const scope = `@WithLock(${this.definition.label})`;
    const shape = checkPermitShape({ limit, mode } as PermitShape, scope);
    permitStoreOf(store, shape, `${scope}.${'limit' in shape ? 'limit' : 'mode'}`);
  }

  /**
   * Resolves this method's options over `service`'s defaults now, at bootstrap, so that a ttl its store cannot
   * honour (under etcd's whole second, under twice the hand-off window) fails the bootstrap, not every call.
   * @throws LockConfigurationError naming `@WithLock(Class.method).ttl`
   */
  checkSettings(service: LockManager): void {
    this.settingsFor(service);
  }

  /**
   * Runs `call` under the lock(s) of this method, per its policy. Placeholders read the request being
   * handled only when this method is its handler: a provider method called during a request has its own
   * arguments, which a route param or body field of the same name must not replace.
   */
  async invoke<T>(service: LockManager, call: LockedCall<T>): Promise<T | undefined> {
    const { instance, args, handler, run } = call;
    const binding = this.bindingFor(instance, handler);
    const keys = this.keysFor(instance, args, binding);
    const settings = this.settingsFor(service);
    const keyTemplateOf = settings.metricKey === undefined ? this.keyTemplates(keys) : undefined;
    const { label, holdAtLeast } = this.definition;
    const skip = (error: LockNotAcquiredError): undefined => {
      service.reportSkip(label, error, keyTemplateOf?.(error.key) ?? settings.metricKey);
      return undefined;
    };
    // a scheduled method is called by its scheduler, who has nobody to give a conflict to
    const onContention = this.definition.onContention ?? (binding.runs ? 'skip' : 'throw');
    const scope = { keyTemplateOf, onContention: onContention === 'skip' ? skip : undefined, holdAtLeast };
    const ticks = holdAtLeast === undefined ? binding.runs?.tickSchedule() : undefined;
    let began = false;
    const runs = (): T | Promise<T> => {
      began = true;
      return run();
    };
    const locked = ticks
      ? runOncePerTick(
          service,
          {
            key: tickClaimKey(label, keys),
            settings: this.claimSettingsFor(service, settings),
            ticks,
            onClaimed: skip,
          },
          (started) => service.runLocked(keys, settings, () => (started(), runs()), scope),
        )
      : service.runLocked(keys, settings, runs, scope);
    if (!binding.runs || onContention !== 'skip') return locked;
    // a tick the store could not grant (it is down: logged as a store error, at most once per 5 s; the service
    // shuts down: the next instance runs it) is skipped too; its scheduler would log each one as a failed job
    return locked.catch((error: unknown) => {
      if (began || !(error instanceof LockStoreError)) throw error;
      return undefined;
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

  /** The class the method runs on for a call on `instance`: its own class, else the class that declares it. */
  ownerOf(instance: unknown): object {
    return classOf(instance) ?? this.definition.declaringClass;
  }

  /** The binding of the method on the class of `instance`, made now if the module did not make it at bootstrap. */
  private bindingFor(instance: unknown, handler: object): MethodBinding {
    const owner = this.ownerOf(instance);
    this.prepare(owner, handler);
    return this.bindings.get(owner) as MethodBinding;
  }

  private keysFor(instance: unknown, args: unknown[], binding: MethodBinding): string[] {
    const { key } = this.definition;
    if (this.templates) {
      const frame = requestFor(this);
      return binding.resolvers.map((resolver) => resolver.resolve(args, frame));
    }
    const produced = (key as (...a: unknown[]) => unknown).apply(instance, args);
    const keys = typeof produced === 'string' ? [produced] : produced;
    if (
      !Array.isArray(keys) ||
      keys.length === 0 ||
      !keys.every((k): k is string => typeof k === 'string' && k.length > 0)
    ) {
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
      settings = service.resolve(
        {
          label: label.slice(0, MAX_LABEL_LENGTH),
          ...(metricKey === undefined ? {} : { metricKey: metricKey.slice(0, MAX_LABEL_LENGTH) }),
          ...this.definition.options,
        },
        `@WithLock(${label})`,
      );
      this.settingsByService.set(service, settings);
    }
    return settings;
  }

  /**
   * The settings of the method's tick claims: a plain lease (never a permit) with the method's ttl and label,
   * taken without waiting (a claimed tick is skipped), never fenced, and counted in metrics apart from the
   * method's keys (`tick:<template>`).
   */
  private claimSettingsFor(service: LockManager, settings: LockSettings): LockSettings {
    let claim = this.claimSettingsByService.get(service);
    if (!claim) {
      const { shape: _permitsOfTheKeys, ...lease } = settings;
      const metricKey = `tick:${settings.metricKey ?? this.definition.label}`.slice(0, MAX_LABEL_LENGTH);
      claim = { ...lease, wait: 0, fencing: false, metricKey };
      this.claimSettingsByService.set(service, claim);
    }
    return claim;
  }
}

function classOf(instance: unknown): object | undefined {
  if (instance === null || typeof instance !== 'object') return undefined;
  const constructor = (instance as { constructor?: unknown }).constructor;
  return typeof constructor === 'function' ? constructor : undefined;
}
