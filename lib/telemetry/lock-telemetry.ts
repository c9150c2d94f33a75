import { performance } from 'node:perf_hooks';
import type { Attributes, ObservableCallback, Span, Tracer } from '@opentelemetry/api';
import type { LockTelemetryOptions } from '../interfaces/lock-telemetry-options.interface.js';
import type { LockEventListener, LockEventName } from '../core/events/lock-events.js';
import type { Lock } from '../core/lock.js';
import type { OpenTelemetryApi } from './load-opentelemetry.js';
import { LockAttributes } from './lock-attributes.js';
import { createInstruments, isNoop, type Instruments } from './lock-instruments.js';
import { LeadershipMetrics } from './leadership-metrics.js';
import { LOCK_INSTRUMENTATION_SCOPE } from './lock-metrics.js';
import { noTracerProvider, telemetryApi, tracerRegistered } from './registered-providers.js';

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
  private readonly leadership?: LeadershipMetrics;
  private readonly tracer?: Tracer;
  /** What the API's tracer provider delegates to while no SDK is registered. */
  private readonly noTracerProvider: unknown;
  private readonly attributes: LockAttributes;
  private readonly observeHeld: ObservableCallback = (result) => {
    for (const [template, count] of this.heldByTemplate) {
      result.observe(count, { 'lock.key_template': template, 'lock.store': this.attributes.storeName });
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
    const api = await telemetryApi(options);
    return api ? new LockTelemetry(api, locks, options) : undefined;
  }

  private constructor(
    private readonly api: OpenTelemetryApi,
    locks: InstrumentableLocks,
    options: LockTelemetryOptions,
  ) {
    this.attributes = new LockAttributes(locks.store.constructor?.name || 'LockStore', options);
    // instruments made before any SDK is registered are no-ops for good: building their attributes on
    // every lock operation would cost time for nothing
    const instruments = options.metrics !== false ? createInstruments(api) : undefined;
    if (instruments && !isNoop(api, instruments)) {
      this.instruments = instruments;
      this.instruments.held.addCallback(this.observeHeld);
    }
    if (options.traces !== false) this.tracer = api.trace.getTracer(LOCK_INSTRUMENTATION_SCOPE);
    this.noTracerProvider = noTracerProvider(api);
    const on = <E extends LockEventName>(event: E, listener: LockEventListener<E>): void => {
      this.stops.push(locks.on(event, listener));
    };
    const m = this.instruments;
    if (m)
      this.leadership = new LeadershipMetrics(
        api.metrics.getMeter(LOCK_INSTRUMENTATION_SCOPE),
        this.attributes.storeName,
        on,
      );

    on('contended', (event) => m?.contentions.add(1, this.attributes.of(event)));
    on('waited', (event) => {
      if (event.acquired) return;
      const attributes = this.attributes.of(event);
      m?.waitDuration.record(event.waitTime / 1000, { ...attributes, 'lock.acquired': false });
      this.acquireSpan(event.waitTime, { ...attributes, 'lock.acquired': false, 'lock.attempts': event.attempts });
    });
    on('acquired', (event) => {
      const tracing = this.tracing();
      if (!m && !tracing) return;
      const attributes = this.attributes.of(event);
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
      m?.renewals.add(1, { ...this.attributes.of(event), 'lock.renewal': 'manual' });
      this.holds.get(event.lock)?.span?.addEvent('lock.extended', { 'lock.ttl_ms': event.ttl });
    });
    on('renewed', (event) => m?.renewals.add(1, { ...this.attributes.of(event), 'lock.renewal': 'auto' }));
    on('released', (event) => {
      if (!m && !this.holds.has(event.lock)) return;
      m?.holdDuration.record(event.holdTime / 1000, { ...this.attributes.of(event), 'lock.outcome': 'released' });
      const span = this.endHold(event.lock);
      if (event.keptFor !== undefined) span?.setAttribute('lock.kept_for_ms', event.keptFor);
      span?.setAttribute('lock.outcome', 'released').end();
    });
    on('lost', (event) => {
      const attributes = this.attributes.of(event);
      m?.lost.add(1, { ...attributes, 'lock.lost.reason': event.reason });
      m?.holdDuration.record(event.holdTime / 1000, { ...attributes, 'lock.outcome': 'lost' });
      this.endHold(event.lock)
        ?.setAttributes({ 'lock.outcome': 'lost', 'lock.lost.reason': event.reason })
        .setStatus({ code: api.SpanStatusCode.ERROR, message: this.attributes.describe(event.error, event).message })
        .end();
    });
    on('late-grant', (event) => m?.lateGrants.add(1, this.attributes.of(event)));
    on('skipped', (event) => m?.skipped.add(1, this.attributes.of(event)));
    on('store-error', (event) => {
      m?.storeErrors.add(1, this.attributes.ofStoreError(event));
      if (event.operation !== 'acquire') return;
      const opened = this.openAcquireSpan(event.waitTime ?? 0, {
        ...this.attributes.of(event),
        'lock.acquired': false,
      });
      const { error } = event;
      // the exception event carries the message and stack, which name the key: bounded like the attributes
      const { message, stack } = this.attributes.describe(error, event);
      opened?.span.recordException({
        code: error.code,
        name: error.name,
        message,
        ...(stack === undefined ? {} : { stack }),
      });
      // ended on the clock it was dated back on: the SDK ends a span given a start time by Date.now(), which
      // can be behind performance.timeOrigin + performance.now() and end the span before it began
      opened?.span.setStatus({ code: api.SpanStatusCode.ERROR, message }).end(opened.now);
    });
  }

  /** Stops recording: no more metrics or spans from this manager, and its gauge callback is removed. */
  detach(): void {
    for (const stop of this.stops.splice(0)) stop();
    this.instruments?.held.removeCallback(this.observeHeld);
    this.leadership?.detach();
  }

  /** Whether spans are recorded: a tracer provider is registered (the API's proxy has a real delegate). */
  private tracing(): boolean {
    return this.tracer !== undefined && tracerRegistered(this.api, this.noTracerProvider);
  }

  /** The `lock.acquire` span of an acquisition that just ended (see `openAcquireSpan`), ended now. */
  private acquireSpan(waitTime: number, attributes: Attributes): void {
    const opened = this.openAcquireSpan(waitTime, attributes);
    opened?.span.end(opened.now);
  }

  /**
   * The `lock.acquire` span of an acquisition that just ended, dated back to its start and left open: created
   * in the caller's context, so it sits under the caller's own span. `now` is the moment it ended, as a time.
   */
  private openAcquireSpan(waitTime: number, attributes: Attributes): { span: Span; now: number } | undefined {
    if (!this.tracer || !this.tracing()) return undefined;
    const now = performance.now();
    const span = this.tracer.startSpan('lock.acquire', {
      kind: this.api.SpanKind.INTERNAL,
      startTime: performance.timeOrigin + now - waitTime,
      attributes,
    });
    return { span, now: performance.timeOrigin + now };
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
