/**
 * OpenTelemetry instrumentation of the locks, through `@opentelemetry/api` (an optional peer: without
 * it, or without an SDK registered by the application, nothing is recorded and nothing is slowed down).
 */
export interface LockTelemetryOptions {
  /** Record metrics through the global `MeterProvider` (register the SDK before the app starts). @default true */
  readonly metrics?: boolean;
  /**
   * Record `lock.acquire` and `lock.hold` spans through the global `TracerProvider`. `LockService` records them
   * when a tracer provider is registered at bootstrap; `true` also from one registered later. @default true
   */
  readonly traces?: boolean;
  /**
   * Also put the resolved key (`lock.key`) on metrics and spans. Each distinct key becomes its own time
   * series, so keep this off unless the keys are a small fixed set. @default false
   */
  readonly resolvedKeys?: boolean;
}
