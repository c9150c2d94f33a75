import { context, diag, metrics, trace, DiagLogLevel, type Attributes, type HrTime } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  AggregationType,
  DataPointType,
  InstrumentType,
  MeterProvider,
  MetricReader,
  type DataPoint,
  type ExponentialHistogram,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';

/**
 * Collects only when asked, as a pull exporter (Prometheus) does on each scrape. Sums and histograms are
 * cumulative. Asynchronous up-down counters are read as the values their callbacks observed at this
 * collection: cumulatively, the SDK keeps reporting the last value of a series no callback observes any more,
 * which would hide a callback that was removed.
 */
class OnDemandMetricReader extends MetricReader {
  constructor() {
    super({
      aggregationSelector: (type) =>
        type === InstrumentType.OBSERVABLE_UP_DOWN_COUNTER
          ? { type: AggregationType.LAST_VALUE }
          : { type: AggregationType.DEFAULT },
      aggregationTemporalitySelector: (type) =>
        type === InstrumentType.OBSERVABLE_UP_DOWN_COUNTER
          ? AggregationTemporality.DELTA
          : AggregationTemporality.CUMULATIVE,
    });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** Keeps every span as it starts, ended or not; the exporter only ever sees the ended ones. */
class StartedSpans implements SpanProcessor {
  readonly spans: Span[] = [];
  onStart(span: Span): void {
    this.spans.push(span);
  }
  onEnd(): void {}
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

function includes(actual: Attributes, expected: Attributes): boolean {
  return Object.entries(expected).every(([key, value]) => actual[key] === value);
}

/** Milliseconds since the epoch. */
export function epochMs(time: HrTime): number {
  return time[0] * 1000 + time[1] / 1e6;
}

/** The metrics of one collection. */
export class CollectedMetrics {
  constructor(readonly metrics: readonly MetricData[]) {}

  /** The metric called `name`; fails when the collection has none (no instrument, or nothing recorded). */
  get(name: string): MetricData {
    const found = this.metrics.filter((metric) => metric.descriptor.name === name);
    if (found.length !== 1) {
      const names = this.metrics.map((metric) => metric.descriptor.name);
      throw new Error(`expected one metric ${name}, found ${found.length}; collected: ${names.join(', ')}`);
    }
    return found[0];
  }

  /** The data points of `name` whose attributes include `attributes`. */
  points(name: string, attributes: Attributes = {}): Array<DataPoint<number | Histogram | ExponentialHistogram>> {
    const points: Array<DataPoint<number | Histogram | ExponentialHistogram>> = this.get(name).dataPoints;
    return points.filter((point) => includes(point.attributes, attributes));
  }

  /** The total of a counter over the series whose attributes include `attributes`. */
  sum(name: string, attributes?: Attributes): number {
    const metric = this.get(name);
    if (metric.dataPointType !== DataPointType.SUM) throw new Error(`${name} is not a sum`);
    return this.points(name, attributes).reduce((total, point) => total + (point.value as number), 0);
  }

  /** A histogram's count, sum, min and max over the series whose attributes include `attributes`. */
  histogram(name: string, attributes?: Attributes): { count: number; sum: number; min: number; max: number } {
    const metric = this.get(name);
    if (metric.dataPointType !== DataPointType.HISTOGRAM) throw new Error(`${name} is not a histogram`);
    const merged = { count: 0, sum: 0, min: Infinity, max: -Infinity };
    for (const { value } of this.points(name, attributes) as Array<DataPoint<Histogram>>) {
      merged.count += value.count;
      merged.sum += value.sum!;
      merged.min = Math.min(merged.min, value.min!);
      merged.max = Math.max(merged.max, value.max!);
    }
    return merged;
  }

  /** The attributes of every data point of every metric. */
  allAttributes(): Attributes[] {
    return this.metrics.flatMap((metric) =>
      (metric.dataPoints as Array<DataPoint<unknown>>).map((point) => point.attributes),
    );
  }
}

/** The spans so far. */
export class CollectedSpans {
  constructor(
    /** Every span started, ended or not. */
    readonly started: readonly Span[],
    private readonly finished: readonly ReadableSpan[],
  ) {}

  /** The ended spans called `name`, as the exporter received them. */
  ended(name: string): ReadableSpan[] {
    return this.finished.filter((span) => span.name === name);
  }
}

/** What the SDK wrote to the diagnostic logger at `warn` or above (e.g. an operation on an ended span). */
export interface DiagnosticMessage {
  readonly level: 'error' | 'warn';
  readonly message: string;
}

/**
 * Registers the real OpenTelemetry SDK globally for a test: a `MeterProvider` read on demand, a
 * `TracerProvider` exporting to memory through a `SimpleSpanProcessor`, the AsyncLocalStorage context manager,
 * and a diagnostic logger that keeps the SDK's warnings. Fails when a provider or context manager is already
 * registered; `uninstall` unregisters and shuts everything down.
 */
export function installOpenTelemetrySdk(): {
  meterProvider: MeterProvider;
  diagnostics: DiagnosticMessage[];
  collectMetrics(): Promise<CollectedMetrics>;
  collectSpans(): Promise<CollectedSpans>;
  uninstall(): Promise<void>;
} {
  const diagnostics: DiagnosticMessage[] = [];
  const note = (level: DiagnosticMessage['level']) => (message: string) => void diagnostics.push({ level, message });
  const ignore = () => undefined;
  const logger = { error: note('error'), warn: note('warn'), info: ignore, debug: ignore, verbose: ignore };
  diag.setLogger(logger, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });

  const reader = new OnDemandMetricReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const exporter = new InMemorySpanExporter();
  const started = new StartedSpans();
  const tracerProvider = new TracerProvider({
    spanProcessors: [started, new SimpleSpanProcessor({ exporter })],
  });
  if (!metrics.setGlobalMeterProvider(meterProvider)) throw new Error('a global MeterProvider is already registered');
  if (!trace.setGlobalTracerProvider(tracerProvider)) throw new Error('a global TracerProvider is already registered');
  if (!context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())) {
    throw new Error('a global ContextManager is already registered');
  }

  return {
    meterProvider,
    diagnostics,
    async collectMetrics() {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new AggregateError(errors, 'metric collection failed');
      return new CollectedMetrics(resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics));
    },
    async collectSpans() {
      await tracerProvider.forceFlush();
      return new CollectedSpans([...started.spans], exporter.getFinishedSpans());
    },
    async uninstall() {
      metrics.disable();
      trace.disable();
      context.disable();
      diag.disable();
      await Promise.all([meterProvider.shutdown(), tracerProvider.shutdown()]);
    },
  };
}
