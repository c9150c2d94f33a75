import type { Counter, Histogram, Observable } from '@opentelemetry/api';
import type { OpenTelemetryApi } from './load-opentelemetry.js';
import { LOCK_INSTRUMENTATION_SCOPE, LOCK_METRICS } from './lock-metrics.js';

const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const HOLD_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/** The instruments of one `LockTelemetry`, one per {@link LOCK_METRICS} name. */
export interface Instruments {
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

/** Whether `instruments` are the API's no-ops (no meter provider was registered when they were made). */
export function isNoop(api: OpenTelemetryApi, instruments: Instruments): boolean {
  return instruments.acquisitions.constructor === api.createNoopMeter().createCounter('noop').constructor;
}

/** Makes every instrument of {@link LOCK_METRICS} on the package's meter. */
export function createInstruments(api: OpenTelemetryApi): Instruments {
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
