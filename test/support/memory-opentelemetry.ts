import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import {
  ROOT_CONTEXT,
  TraceFlags,
  context as contextApi,
  metrics,
  trace,
  type Attributes,
  type Context,
  type ContextManager,
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
  type MetricOptions,
  type Observable,
  type ObservableCallback,
  type Span,
  type SpanAttributeValue,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  type TimeInput,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';

/**
 * A small in-memory OpenTelemetry SDK for tests: meter, tracer and context manager registered through the
 * API's global registration, recording every instrument call and span as it is made. A stand-in for
 * `@opentelemetry/sdk-metrics` + `sdk-trace-base` (InMemoryMetricExporter / InMemorySpanExporter) that
 * keeps the raw measurements rather than aggregating them.
 */

/** One measurement: a counter `add` or a histogram `record` (or an observation at collection). */
export interface Measurement {
  readonly value: number;
  readonly attributes: Attributes;
}

/** An instrument as it was created, with everything recorded on it. */
export interface RecordedInstrument {
  readonly kind:
    | 'counter'
    | 'upDownCounter'
    | 'histogram'
    | 'gauge'
    | 'observableGauge'
    | 'observableCounter'
    | 'observableUpDownCounter';
  readonly name: string;
  readonly options: MetricOptions;
  readonly meter: string;
  readonly measurements: Measurement[];
  readonly callbacks: Set<ObservableCallback>;
}

/** A span as it was started, and how it ended. */
export interface RecordedSpan {
  readonly name: string;
  readonly tracer: string;
  readonly spanContext: SpanContext;
  readonly parentSpanId?: string;
  readonly kind?: number;
  readonly startTime: number;
  endTime?: number;
  readonly attributes: Attributes;
  readonly events: Array<{ name: string; attributes?: Attributes }>;
  readonly exceptions: unknown[];
  status: SpanStatus;
}

function epochMs(time: TimeInput | undefined): number {
  if (time === undefined) return Date.now();
  if (typeof time === 'number') return time;
  if (time instanceof Date) return time.getTime();
  return time[0] * 1000 + time[1] / 1e6;
}

class MemorySpan implements Span {
  constructor(private readonly record: RecordedSpan) {}
  spanContext(): SpanContext {
    return this.record.spanContext;
  }
  setAttribute(key: string, value: SpanAttributeValue): this {
    (this.record.attributes as Record<string, unknown>)[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes): this {
    Object.assign(this.record.attributes, attributes);
    return this;
  }
  addEvent(name: string, attributes?: Attributes | TimeInput): this {
    const isAttributes = typeof attributes === 'object' && !(attributes instanceof Date) && !Array.isArray(attributes);
    this.record.events.push({ name, ...(isAttributes ? { attributes: attributes as Attributes } : {}) });
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.record.status = status;
    return this;
  }
  updateName(): this {
    return this;
  }
  end(endTime?: TimeInput): void {
    if (this.record.endTime === undefined) this.record.endTime = epochMs(endTime);
  }
  isRecording(): boolean {
    return this.record.endTime === undefined;
  }
  recordException(exception: unknown): void {
    this.record.exceptions.push(exception);
  }
}

/** Records every span started through the global tracer provider. */
export class MemoryTracerProvider implements TracerProvider {
  readonly spans: RecordedSpan[] = [];

  getTracer(name: string): Tracer {
    const spans = this.spans;
    const startSpan = (spanName: string, options: SpanOptions = {}, context?: Context): Span => {
      const parent = trace.getSpanContext(context ?? contextApi.active());
      const record: RecordedSpan = {
        name: spanName,
        tracer: name,
        spanContext: {
          traceId: parent?.traceId ?? randomBytes(16).toString('hex'),
          spanId: randomBytes(8).toString('hex'),
          traceFlags: TraceFlags.SAMPLED,
        },
        ...(parent ? { parentSpanId: parent.spanId } : {}),
        kind: options.kind,
        startTime: epochMs(options.startTime),
        attributes: { ...options.attributes },
        events: [],
        exceptions: [],
        status: { code: 0 },
      };
      spans.push(record);
      return new MemorySpan(record);
    };
    return {
      startSpan,
      startActiveSpan: ((spanName: string, ...rest: unknown[]) => {
        const fn = rest.pop() as (span: Span) => unknown;
        const span = startSpan(spanName, rest[0] as SpanOptions | undefined, rest[1] as Context | undefined);
        return contextApi.with(trace.setSpan(contextApi.active(), span), () => fn(span));
      }) as Tracer['startActiveSpan'],
    };
  }

  /** The finished spans called `name`. */
  ended(name: string): RecordedSpan[] {
    return this.spans.filter((span) => span.name === name && span.endTime !== undefined);
  }
}

/** Records every instrument created and every measurement made through the global meter provider. */
export class MemoryMeterProvider implements MeterProvider {
  readonly instruments = new Map<string, RecordedInstrument>();

  getMeter(name: string): Meter {
    const instrument = (kind: RecordedInstrument['kind'], instrumentName: string, options: MetricOptions = {}) => {
      const created: RecordedInstrument = {
        kind,
        name: instrumentName,
        options,
        meter: name,
        measurements: [],
        callbacks: new Set(),
      };
      // like the SDK, a second identical instrument shares the first one's measurements
      const existing = this.instruments.get(instrumentName);
      if (existing) return existing;
      this.instruments.set(instrumentName, created);
      return created;
    };
    const synchronous = (created: RecordedInstrument) => {
      const measure = (value: number, attributes: Attributes = {}) =>
        void created.measurements.push({ value, attributes });
      return { add: measure, record: measure } as Counter & Histogram;
    };
    const observable = (created: RecordedInstrument): Observable => ({
      addCallback: (callback) => void created.callbacks.add(callback),
      removeCallback: (callback) => void created.callbacks.delete(callback),
    });
    return {
      createCounter: (n, o) => synchronous(instrument('counter', n, o)),
      createUpDownCounter: (n, o) => synchronous(instrument('upDownCounter', n, o)),
      createHistogram: (n, o) => synchronous(instrument('histogram', n, o)),
      createGauge: (n, o) => synchronous(instrument('gauge', n, o)),
      createObservableGauge: (n, o) => observable(instrument('observableGauge', n, o)),
      createObservableCounter: (n, o) => observable(instrument('observableCounter', n, o)),
      createObservableUpDownCounter: (n, o) => observable(instrument('observableUpDownCounter', n, o)),
      addBatchObservableCallback: () => undefined,
      removeBatchObservableCallback: () => undefined,
    };
  }

  /** The instrument called `name`; fails when it was never created. */
  get(name: string): RecordedInstrument {
    const found = this.instruments.get(name);
    if (!found) throw new Error(`no instrument ${name}; created: ${[...this.instruments.keys()].join(', ')}`);
    return found;
  }

  /** The measurements of `name` whose attributes include `attributes`. */
  measurements(name: string, attributes: Attributes = {}): Measurement[] {
    return this.get(name).measurements.filter((m) =>
      Object.entries(attributes).every(([key, value]) => m.attributes[key] === value),
    );
  }

  /** The sum of a counter's adds (with `attributes`). */
  sum(name: string, attributes?: Attributes): number {
    return this.measurements(name, attributes).reduce((total, m) => total + m.value, 0);
  }

  /** How many values a histogram recorded (with `attributes`). */
  count(name: string, attributes?: Attributes): number {
    return this.measurements(name, attributes).length;
  }

  /** Runs the callbacks of an observable instrument, as a collection would, and returns what they observed. */
  async collect(name: string): Promise<Measurement[]> {
    const observed: Measurement[] = [];
    for (const callback of this.get(name).callbacks) {
      await callback({ observe: (value, attributes = {}) => void observed.push({ value, attributes }) });
    }
    return observed;
  }
}

/** Context propagation across `await` with AsyncLocalStorage, like `@opentelemetry/context-async-hooks`. */
export class MemoryContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(context, () => fn.call(thisArg, ...args));
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

/** Registers a fresh in-memory meter, tracer and context manager globally; `uninstall` unregisters them. */
export function installMemoryOpenTelemetry(): {
  meters: MemoryMeterProvider;
  tracer: MemoryTracerProvider;
  uninstall(): void;
} {
  const meters = new MemoryMeterProvider();
  const tracer = new MemoryTracerProvider();
  if (!metrics.setGlobalMeterProvider(meters)) throw new Error('a global MeterProvider is already registered');
  if (!trace.setGlobalTracerProvider(tracer)) throw new Error('a global TracerProvider is already registered');
  if (!contextApi.setGlobalContextManager(new MemoryContextManager())) {
    throw new Error('a global ContextManager is already registered');
  }
  return {
    meters,
    tracer,
    uninstall() {
      metrics.disable();
      trace.disable();
      contextApi.disable();
    },
  };
}
