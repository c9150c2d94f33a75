import type { LockTelemetryOptions } from '../interfaces/lock-telemetry-options.interface.js';
import { validateTelemetry } from '../options/validate-options.js';
import { loadOpenTelemetry, type OpenTelemetryApi } from './load-opentelemetry.js';
import { LOCK_INSTRUMENTATION_SCOPE } from './lock-metrics.js';

/** Which OpenTelemetry providers the application has registered with the API, right now. */
export interface RegisteredProviders {
  readonly tracer: boolean;
  readonly meter: boolean;
}

/**
 * `@opentelemetry/api` when `options` ask for any telemetry and the application has the API installed.
 * @throws LockConfigurationError for a switch that is not a boolean, or an unknown option name
 */
export async function telemetryApi(options: LockTelemetryOptions): Promise<OpenTelemetryApi | undefined> {
  if (validateTelemetry(options) === false) return undefined;
  if (options.metrics === false && options.traces === false) return undefined;
  return loadOpenTelemetry();
}

/** What the API's global tracer provider delegates to while no SDK is registered: the API's no-op provider. */
export function noTracerProvider(api: OpenTelemetryApi): unknown {
  return new api.ProxyTracerProvider().getDelegate();
}

/**
 * Whether the application registered a tracer provider (an SDK's) with `api`: the API's global tracer provider
 * is a proxy, which delegates to `none` until one is.
 * @param none `noTracerProvider(api)`, for a caller that asks often
 */
export function tracerRegistered(api: OpenTelemetryApi, none: unknown = noTracerProvider(api)): boolean {
  const delegate = (api.trace.getTracerProvider() as { getDelegate?: () => unknown }).getDelegate?.();
  return delegate !== undefined && delegate !== none;
}

/** Whether the application registered a tracer provider and a meter provider (an SDK's) with `api`. */
export function registeredProviders(api: OpenTelemetryApi): RegisteredProviders {
  const meter = api.metrics.getMeter(LOCK_INSTRUMENTATION_SCOPE).constructor !== api.createNoopMeter().constructor;
  return { tracer: tracerRegistered(api), meter };
}
