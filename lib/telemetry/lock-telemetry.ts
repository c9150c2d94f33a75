import { performance } from 'node:perf_hooks';
import type { Attributes, Counter, Histogram, ObservableCallback, Observable, Span, Tracer } from '@opentelemetry/api';
import type { LockError } from '../errors/lock.error.js';
import { LockStoreError } from '../errors/lock-store.error.js';
import type { LockTelemetryOptions } from '../interfaces/lock-telemetry-options.interface.js';
import type { LockEventListener, LockEventName, LockStoreErrorEvent } from '../events/lock-events.js';
import type { Lock } from '../core/lock.js';
import { DIRECT_KEY_TEMPLATE } from '../events/lock-observer.js';
import { failureKind } from '../utils/failure-kind.js';
import { quoted } from '../utils/printable.js';
import { validateTelemetry } from '../options/validate-options.js';
import { loadOpenTelemetry, type OpenTelemetryApi } from './load-opentelemetry.js';

/** The instrumentation scope (meter and tracer name) of every metric and span. */
export const LOCK_INSTRUMENTATION_SCOPE = 'nestjs-lock';

/**
 * The metric names. In Prometheus, dots become underscores, counters end in `_total` and durations in
 * `_seconds` (e.g. `lock_wait_duration_seconds_bucket`).
 */
export const LOCK_METRICS = Object.freeze({
  /** Counter of granted leases. */
  acquisitions: 'lock.acquisitions',
  /** Counter of acquisitions that found the key held. */
  contentions: 'lock.contentions',
  /** Histogram (s) from the call to the grant or the give-up; `lock.acquired` says which. */
  waitDuration: 'lock.wait.duration',
  /** Histogram (s) from the grant to the release or the loss; `lock.outcome` says which. */
  holdDuration: 'lock.hold.duration',
  /** Counter of leases lost before their holder released them, by `lock.lost.reason`. */
  lost: 'lock.lost',
  /** Counter of grants that came back after their validity ended and were released unused. */
  lateGrants: 'lock.late_grants',
  /** Counter of lease extensions: `lock.renewal` is `auto` (the scheduler) or `manual` (`lock.extend()`). */
  renewals: 'lock.renewals',
  /** Counter of store failures, by `lock.operation`. */
  storeErrors: 'lock.store.errors',
  /** Counter of calls skipped because their lock was busy. */
  skipped: 'lock.skipped',
  /** Observable up-down counter (a gauge in Prometheus) of leases held by this process right now. */
  held: 'lock.held',
});

const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const HOLD_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
/** Past this many key templates, the held gauge forgets the idle ones instead of reporting 0 for them. */
const MAX_IDLE_TEMPLATES = 1000;

/** What the instrumentation needs from a `LockManager`. */
export interface InstrumentableLocks {
  readonly store: object;
  on<E extends LockEventName>(event: E, listener: LockEventListener<E>): () => void;
}

interface Hold {
  readonly template: string;
  readonly span?: Span;
}

interface Instruments {
  readonly acquisitions: Counter;
  readonly contentions: Counter;
  readonly waitDuration: Histogram;
  readonly holdDuration: Histogram;
  readonly lost: Counter;
  readonly lateGrants: Counter;
  readonly renewals: Counter;
  readonly storeErrors: Counter;
  readonly skipped: Counter;
  readonly held: Observable;
}

/**
 * OpenTelemetry metrics and spans of one `LockManager`, recorded from its lock events. Attributes are
 * bounded: the key template (`lock.key_template`) and the store class (`lock.store`), never the resolved
 * key unless `resolvedKeys` is on. `LockService` attaches it by itself (module option `telemetry`); attach
 * it to a plain `LockManager` yourself.
 *
 * @example
 * ```ts
 * const telemetry = await LockTelemetry.attach(manager);
 * // ...
 * telemetry?.detach();
 * ```
 */
export class LockTelemetry {
  private readonly stops: Array<() => void> = [];
  private readonly holds = new WeakMap<Lock, Hold>();
  private readonly heldByTemplate = new Map<string, number>();
  private readonly instruments?: Instruments;
  private readonly tracer?: Tracer;
  /** What the API's tracer provider delegates to while no SDK is registered. */
  private readonly noTracerProvider: unknown;
  private readonly storeName: string;
  private readonly observeHeld: ObservableCallback = (result) => {
    for (const [template, count] of this.heldByTemplate) {
      result.observe(count, { 'lock.key_template': template, 'lock.store': this.storeName });
    }
  };

  /**
   * Instruments `locks` through `@opentelemetry/api`.
   * @returns the instrumentation, or `undefined` when `@opentelemetry/api` is not installed or both
   *   metrics and traces are off
   * @throws LockConfigurationError for a switch that is not a boolean, or an unknown option name
   */
  static async attach(
    locks: InstrumentableLocks,
    options: LockTelemetryOptions = {},
  ): Promise<LockTelemetry | undefined> {
    if (validateTelemetry(options) === false) return undefined;
    if (options.metrics === false && options.traces === false) return undefined;
    const api = await loadOpenTelemetry();
    return api ? new LockTelemetry(api, locks, options) : undefined;
  }

  private constructor(
    private readonly api: OpenTelemetryApi,
    locks: InstrumentableLocks,
    private readonly options: LockTelemetryOptions,
  ) {
    this.storeName = locks.store.constructor?.name || 'LockStore';
    // instruments made before any SDK is registered are no-ops for good: building their attributes on
    // every lock operation would cost time for nothing
    const instruments = options.metrics !== false ? createInstruments(api) : undefined;
    if (instruments && !isNoop(api, instruments)) {
      this.instruments = instruments;
      this.instruments.held.addCallback(this.observeHeld);
    }
    if (options.traces !== false) this.tracer = api.trace.getTracer(LOCK_INSTRUMENTATION_SCOPE);
    this.noTracerProvider = new api.ProxyTracerProvider().getDelegate();
    const on = <E extends LockEventName>(event: E, listener: LockEventListener<E>): void => {
      this.stops.push(locks.on(event, listener));
    };
    const m = this.instruments;

    on('contended', (event) => m?.contentions.add(1, this.attributes(event)));
    on('waited', (event) => {
      if (event.acquired) return;
      const attributes = this.attributes(event);
      m?.waitDuration.record(event.waitTime / 1000, { ...attributes, 'lock.acquired': false });
      this.acquireSpan(event.waitTime, { ...attributes, 'lock.acquired': false, 'lock.attempts': event.attempts });
    });
    on('acquired', (event) => {
      const tracing = this.tracing();
      if (!m && !tracing) return;
      const attributes = this.attributes(event);
      m?.acquisitions.add(1, attributes);
      m?.waitDuration.record(event.waitTime / 1000, { ...attributes, 'lock.acquired': true });
      let span: Span | undefined;
      if (tracing) {
        const details = {
          ...attributes,
          ...(event.fence === undefined ? {} : { 'lock.fence': event.fence }),
          ...(event.label === undefined ? {} : { 'lock.label': event.label }),
        };
        this.acquireSpan(event.waitTime, { ...details, 'lock.acquired': true, 'lock.attempts': event.attempts });
        span = this.tracer?.startSpan('lock.hold', {
          kind: api.SpanKind.INTERNAL,
          attributes: { ...details, 'lock.ttl_ms': event.ttl },
        });
      }
      this.holds.set(event.lock, { template: event.keyTemplate, span });
      this.heldByTemplate.set(event.keyTemplate, (this.heldByTemplate.get(event.keyTemplate) ?? 0) + 1);
    });
    on('extended', (event) => {
      m?.renewals.add(1, { ...this.attributes(event), 'lock.renewal': 'manual' });
      this.holds.get(event.lock)?.span?.addEvent('lock.extended', { 'lock.ttl_ms': event.ttl });
    });
    on('renewed', (event) => m?.renewals.add(1, { ...this.attributes(event), 'lock.renewal': 'auto' }));
    on('released', (event) => {
      if (!m && !this.holds.has(event.lock)) return;
      m?.holdDuration.record(event.holdTime / 1000, { ...this.attributes(event), 'lock.outcome': 'released' });
      const span = this.endHold(event.lock);
      if (event.keptFor !== undefined) span?.setAttribute('lock.kept_for_ms', event.keptFor);
      span?.setAttribute('lock.outcome', 'released').end();
    });
    on('lost', (event) => {
      const attributes = this.attributes(event);
      m?.lost.add(1, { ...attributes, 'lock.lost.reason': event.reason });
      m?.holdDuration.record(event.holdTime / 1000, { ...attributes, 'lock.outcome': 'lost' });
      this.endHold(event.lock)
        ?.setAttributes({ 'lock.outcome': 'lost', 'lock.lost.reason': event.reason })
        .setStatus({ code: api.SpanStatusCode.ERROR, message: this.describe(event.error, event).message })
        .end();
    });
    on('late-grant', (event) => m?.lateGrants.add(1, this.attributes(event)));
    on('skipped', (event) => m?.skipped.add(1, this.attributes(event)));
    on('store-error', (event) => {
      m?.storeErrors.add(1, this.storeErrorAttributes(event));
      if (event.operation !== 'acquire') return;
      const span = this.acquireSpan(event.waitTime ?? 0, { ...this.attributes(event), 'lock.acquired': false }, false);
      const { error } = event;
      // the exception event carries the message and stack, which name the key: bounded like the attributes
      const { message, stack } = this.describe(error, event);
      span?.recordException({ code: error.code, name: error.name, message, ...(stack === undefined ? {} : { stack }) });
      span?.setStatus({ code: api.SpanStatusCode.ERROR, message }).end();
    });
  }

  /** Stops recording: no more metrics or spans from this manager, and its gauge callback is removed. */
  detach(): void {
    for (const stop of this.stops.splice(0)) stop();
    this.instruments?.held.removeCallback(this.observeHeld);
  }

  /** Whether spans are recorded: a tracer provider is registered (the API's proxy has a real delegate). */
  private tracing(): boolean {
    if (!this.tracer) return false;
    const provider = this.api.trace.getTracerProvider() as { getDelegate?: () => unknown };
    return provider.getDelegate?.() !== this.noTracerProvider;
  }

  private attributes(event: { key: string; keyTemplate?: string }): Attributes {
    const attributes: Attributes = {
      'lock.key_template': event.keyTemplate ?? DIRECT_KEY_TEMPLATE,
      'lock.store': this.storeName,
    };
    if (this.options.resolvedKeys) attributes['lock.key'] = event.key;
    return attributes;
  }

  /**
   * What a span may say about `error`: its message and stack as they are with `resolvedKeys`; else with the
   * key template where the message quotes the resolved key, and, for a store failure with a cause, the kind
   * of failure (`WRONGTYPE`, `ECONNREFUSED`, `timeout`) instead of its detail, which may name Redis keys.
   */
  private describe(
    error: LockError,
    event: { key: string; keyTemplate?: string },
  ): { message: string; stack?: string } {
    if (this.options.resolvedKeys) return { message: error.message, stack: error.stack };
    const template = quoted(event.keyTemplate ?? DIRECT_KEY_TEMPLATE);
    let message: string;
    if (error instanceof LockStoreError) {
      const reason = error.cause === undefined ? error.detail : (failureKind(error.cause) ?? 'failed');
      message = `Lock store failed to ${error.operation} ${template}: ${reason ?? 'failed'}`;
    } else {
      message = error.message.split(quoted(event.key)).join(template);
    }
    // the stack's first lines repeat the message; only the frames after it are kept
    const frames = error.stack?.indexOf('\n    at ') ?? -1;
    return frames < 0 ? { message } : { message, stack: `${error.name}: ${message}${error.stack?.slice(frames)}` };
  }

  private storeErrorAttributes(event: LockStoreErrorEvent): Attributes {
    const attributes: Attributes = { 'lock.operation': event.operation, 'lock.store': this.storeName };
    if (event.keyTemplate !== undefined) attributes['lock.key_template'] = event.keyTemplate;
    if (this.options.resolvedKeys) attributes['lock.key'] = event.key;
    return attributes;
  }

  /**
   * The `lock.acquire` span of an acquisition that just ended, dated back to its start: created in the
   * caller's context, so it sits under the caller's own span.
   */
  private acquireSpan(waitTime: number, attributes: Attributes, end = true): Span | undefined {
    if (!this.tracer || !this.tracing()) return undefined;
    const now = performance.now();
    const span = this.tracer.startSpan('lock.acquire', {
      kind: this.api.SpanKind.INTERNAL,
      startTime: performance.timeOrigin + now - waitTime,
      attributes,
    });
    if (end) span.end(performance.timeOrigin + now);
    return span;
  }

  private endHold(lock: Lock): Span | undefined {
    const hold = this.holds.get(lock);
    if (!hold) return undefined;
    this.holds.delete(lock);
    const count = (this.heldByTemplate.get(hold.template) ?? 1) - 1;
    // idle templates keep reporting 0, unless there are so many that they must be forgotten
    if (count > 0 || this.heldByTemplate.size <= MAX_IDLE_TEMPLATES) this.heldByTemplate.set(hold.template, count);
    else this.heldByTemplate.delete(hold.template);
    return hold.span;
  }
}

/** Whether `instruments` are the API's no-ops (no meter provider was registered when they were made). */
function isNoop(api: OpenTelemetryApi, instruments: Instruments): boolean {
  return instruments.acquisitions.constructor === api.createNoopMeter().createCounter('noop').constructor;
}

function createInstruments(api: OpenTelemetryApi): Instruments {
  const meter = api.metrics.getMeter(LOCK_INSTRUMENTATION_SCOPE);
  const counter = (name: string, unit: string, description: string) => meter.createCounter(name, { unit, description });
  return {
    acquisitions: counter(LOCK_METRICS.acquisitions, '{acquisition}', 'Leases granted.'),
    contentions: counter(LOCK_METRICS.contentions, '{contention}', 'Acquisitions that found the lock held.'),
    waitDuration: meter.createHistogram(LOCK_METRICS.waitDuration, {
      unit: 's',
      description: 'Time from an acquire call to the grant (lock.acquired=true) or the give-up (false).',
      advice: { explicitBucketBoundaries: WAIT_BUCKETS },
    }),
    holdDuration: meter.createHistogram(LOCK_METRICS.holdDuration, {
      unit: 's',
      description: 'Time a lease was held, until released (lock.outcome=released) or lost (lost).',
      advice: { explicitBucketBoundaries: HOLD_BUCKETS },
    }),
    lost: counter(LOCK_METRICS.lost, '{lease}', 'Leases lost before their holder released them.'),
    lateGrants: counter(
      LOCK_METRICS.lateGrants,
      '{grant}',
      'Grants that came back after their validity ended (a slow store or a blocked event loop), released unused.',
    ),
    renewals: counter(LOCK_METRICS.renewals, '{renewal}', 'Lease extensions, automatic or by lock.extend().'),
    storeErrors: counter(LOCK_METRICS.storeErrors, '{error}', 'Failures of the lock store, by operation.'),
    skipped: counter(LOCK_METRICS.skipped, '{call}', 'Calls skipped because their lock was busy.'),
    held: meter.createObservableUpDownCounter(LOCK_METRICS.held, {
      unit: '{lease}',
      description: 'Leases held by this process right now.',
    }),
  };
}
