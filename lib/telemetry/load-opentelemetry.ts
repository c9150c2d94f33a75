import type * as OpenTelemetry from '@opentelemetry/api';

/** The `@opentelemetry/api` module. */
export type OpenTelemetryApi = typeof OpenTelemetry;

let loading: Promise<OpenTelemetryApi | undefined> | undefined;

/**
 * `@opentelemetry/api` when the application has it installed, else `undefined`. It is an optional peer:
 * loaded on demand, once, and never required for the package to work. The API keeps its providers in a
 * process-wide registry, so this copy reports to whatever SDK the application registered.
 */
export function loadOpenTelemetry(): Promise<OpenTelemetryApi | undefined> {
  loading ??= import('@opentelemetry/api').then(
    (api) => api,
    () => undefined,
  );
  return loading;
}
