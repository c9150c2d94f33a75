import type { LockTelemetryOptions } from '../interfaces/lock-telemetry-options.interface.js';
import { LockTelemetry, type InstrumentableLocks } from './lock-telemetry.js';
import { registeredProviders, telemetryApi } from './registered-providers.js';

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
  const api = await telemetryApi(options);
  if (!api) return undefined;
  const registered = registeredProviders(api);
  const metrics = options.metrics !== false && registered.meter;
  const traces = options.traces === true || (options.traces !== false && registered.tracer);
  if (!metrics && !traces) return undefined;
  return LockTelemetry.attach(locks, { ...options, metrics, traces });
}
