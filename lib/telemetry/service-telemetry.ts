import type { LockTelemetryOptions } from '../interfaces/lock-telemetry-options.interface.js';
import { validateTelemetry } from '../options/validate-options.js';
import { loadOpenTelemetry, type OpenTelemetryApi } from './load-opentelemetry.js';
import { LockTelemetry, type InstrumentableLocks } from './lock-telemetry.js';
import { LOCK_INSTRUMENTATION_SCOPE } from './lock-metrics.js';

/** Which OpenTelemetry providers the application has registered with the API, right now. */
export interface RegisteredProviders {
  readonly tracer: boolean;
  readonly meter: boolean;
}

/** Whether the application registered a tracer provider and a meter provider (an SDK's) with `api`. */
export function registeredProviders(api: OpenTelemetryApi): RegisteredProviders {
  // the API's global tracer provider is a proxy: without an SDK it delegates to the API's no-op provider
  const delegate = (api.trace.getTracerProvider() as { getDelegate?: () => unknown }).getDelegate?.();
  const tracer = delegate !== undefined && delegate !== new api.ProxyTracerProvider().getDelegate();
  const meter = api.metrics.getMeter(LOCK_INSTRUMENTATION_SCOPE).constructor !== api.createNoopMeter().constructor;
  return { tracer, meter };
}

/**
 * The telemetry `LockService` attaches to itself at bootstrap: metrics when a meter provider is registered
 * by then, spans when a tracer provider is (or, with `traces: true`, from whichever tracer provider is
 * registered at any time); nothing at all without either, so a service in an application without an SDK
 * pays for no listener on its leases. (`LockTelemetry.attach`, called by hand, always listens.)
 * @returns the instrumentation, or `undefined` when nothing would be recorded
 * @throws LockConfigurationError for a switch that is not a boolean, or an unknown option name
 */
export async function attachServiceTelemetry(
  locks: InstrumentableLocks,
  options: LockTelemetryOptions = {},
): Promise<LockTelemetry | undefined> {
  if (validateTelemetry(options) === false) return undefined;
  if (options.metrics === false && options.traces === false) return undefined;
  const api = await loadOpenTelemetry();
  if (!api) return undefined;
  const registered = registeredProviders(api);
  const metrics = options.metrics !== false && registered.meter;
  const traces = options.traces === true || (options.traces !== false && registered.tracer);
  if (!metrics && !traces) return undefined;
  return LockTelemetry.attach(locks, { ...options, metrics, traces });
}
