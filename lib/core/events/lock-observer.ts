import { performance } from 'node:perf_hooks';
import { withKeyTemplate, type LockError } from '../../errors/lock.error.js';
import { LockLostError, type LockLostReason } from '../../errors/lock-lost.error.js';
import type { LockNotAcquiredError } from '../../errors/lock-not-acquired.error.js';
import { asStoreError } from '../../errors/lock-store.error.js';
import type { LateGrant } from '../waiting/late-grant.js';
import type {
  LockAcquiredEvent,
  LockEventBase,
  LockEvents,
  LockReleasedEvent,
  LockStoreOperation,
} from './lock-events.js';
import type { Lock } from '../lock.js';
import type { LockSettings } from '../../options/lock-settings.js';

/** The key template reported for a direct call that gave no `metricKey`. */
export const DIRECT_KEY_TEMPLATE = 'direct';

/** One acquisition in progress: when it started, how often it asked the store, whether it met contention. */
export class AcquireTrace {
  readonly started = performance.now();
  attempts = 0;
  contended = false;

  constructor(
    readonly key: string,
    readonly keyTemplate: string,
    readonly label: string | undefined,
    readonly wait: number,
  ) {}
}

/** What the observer remembers of a granted lease until it ends. */
interface Lease extends LockEventBase {
  readonly acquiredAt: number;
  ended: boolean;
  /** When the shutdown's drain ended while the lease was held, if it did. */
  drainEndedAt?: number;
}

/** A grant that came back after its validity, given back, and whether the acquisition asks again. */
export interface GivenBackGrant {
  readonly late: LateGrant;
  readonly retry: boolean;
}

/**
 * Turns what a `LockManager` does into lock events, with the bookkeeping they need (wait and hold times,
 * attempts, one terminal event per lease). Payloads are built only for events someone listens to. The errors
 * it reports name their resource as the manager's messages do, before anyone sees them.
 */
export class LockObserver {
  /**
   * @param showKeys name resolved keys in messages (the manager's `exposeResolvedKeys`), not key templates
   */
  constructor(
    private readonly events: LockEvents,
    readonly showKeys = false,
  ) {}

  /** Names the resource of `error` by `template` (`'direct'`: none), or by its key where messages show keys. */
  name<E extends LockError>(error: E, template: string | undefined): E {
    return withKeyTemplate(error, template === DIRECT_KEY_TEMPLATE ? undefined : template, this.showKeys);
  }

  /** An acquisition of `key` begins. */
  start(key: string, settings: LockSettings): AcquireTrace {
    return new AcquireTrace(key, settings.metricKey ?? DIRECT_KEY_TEMPLATE, settings.label, settings.wait);
  }

  /** The acquisition found the key held (reported once per acquisition). */
  contended(trace: AcquireTrace, remainingTtl: number | undefined): void {
    if (trace.contended) return;
    trace.contended = true;
    if (!this.events.has('contended')) return;
    this.events.emit('contended', {
      ...eventBase(trace),
      ...(remainingTtl === undefined ? {} : { remainingTtl }),
      wait: trace.wait,
    });
  }

  /** A grant came back after its validity and was given back unused; the acquisition goes on if `retry`. */
  lateGrant(trace: AcquireTrace, { late: grant, retry: retrying }: GivenBackGrant): void {
    if (!this.events.has('late-grant')) return;
    this.events.emit('late-grant', {
      ...eventBase(trace),
      lateBy: grant.lateBy,
      elapsed: grant.elapsed,
      ttl: grant.ttl,
      retrying,
    });
  }

  /** The acquisition ended with a grant (`lock`) or without one. */
  finished(trace: AcquireTrace, lock: Lock | undefined): void {
    const now = performance.now();
    const waitTime = now - trace.started;
    if (trace.contended && this.events.has('waited')) {
      this.events.emit('waited', {
        ...eventBase(trace),
        acquired: lock !== undefined,
        waitTime,
        attempts: trace.attempts,
      });
    }
    if (!lock) return;
    const { key, keyTemplate, label } = trace;
    lock.observed = { key, keyTemplate, label, acquiredAt: now, ended: false } satisfies Lease;
    if (!this.events.has('acquired')) return;
    // one literal of a fixed shape (no spreads): this runs for every grant while telemetry listens
    const acquired: { -readonly [K in keyof LockAcquiredEvent]: LockAcquiredEvent[K] } = {
      key,
      keyTemplate,
      lock,
      ttl: lock.ttl,
      waitTime,
      attempts: trace.attempts,
    };
    if (label !== undefined) acquired.label = label;
    if (lock.fence !== undefined) acquired.fence = lock.fence;
    this.events.emit('acquired', acquired);
  }

  /** The store failed during the acquisition, which ends it. */
  failed(trace: AcquireTrace, error: unknown): void {
    const failure = this.name(asStoreError('acquire', trace.key, error), trace.keyTemplate);
    if (!this.events.has('store-error')) return;
    this.events.emit('store-error', {
      operation: 'acquire',
      error: failure,
      ...eventBase(trace),
      waitTime: performance.now() - trace.started,
    });
  }

  /** The holder extended its lease. */
  extended(lock: Lock, ttl: number): void {
    const lease = lock.observed as Lease | undefined;
    if (lease && this.events.has('extended')) this.events.emit('extended', { ...eventBase(lease), lock, ttl });
  }

  /** The scheduler renewed a lease. */
  renewed(lock: Lock): void {
    const lease = lock.observed as Lease | undefined;
    if (lease && this.events.has('renewed')) this.events.emit('renewed', { ...eventBase(lease), lock, ttl: lock.ttl });
  }

  /** The holder let the lease go: the store deleted it (or kept it `keptFor` ms), or could not be told. */
  released(lock: Lock, keptFor?: number): void {
    const lease = this.end(lock);
    if (!lease || !this.events.has('released')) return;
    const now = performance.now();
    // one literal of a fixed shape (no spreads), as for 'acquired'
    const released: { -readonly [K in keyof LockReleasedEvent]: LockReleasedEvent[K] } = {
      key: lease.key,
      keyTemplate: lease.keyTemplate,
      lock,
      holdTime: now - lease.acquiredAt,
    };
    if (lease.label !== undefined) released.label = lease.label;
    if (keptFor !== undefined) released.keptFor = keptFor;
    if (lease.drainEndedAt !== undefined) released.pastDrain = now - lease.drainEndedAt;
    this.events.emit('released', released);
  }

  /** The shutdown's drain of `drainTimeout` ms ended while `lock` was held; the lease stays held. */
  outlivedDrain(lock: Lock, drainTimeout: number): void {
    const lease = lock.observed as Lease | undefined;
    if (!lease || lease.ended) return;
    const now = performance.now();
    lease.drainEndedAt = now;
    if (!this.events.has('outlived-drain')) return;
    this.events.emit('outlived-drain', { ...eventBase(lease), lock, holdTime: now - lease.acquiredAt, drainTimeout });
  }

  /**
   * The lease ended before its holder released it. `error` is what the holder's signal aborted with; a
   * loss found only at release (the store no longer had our token) gets one made here.
   */
  lost(lock: Lock, reason: LockLostReason, error?: LockLostError): void {
    const lease = this.end(lock);
    if (error) this.name(error, lease?.keyTemplate);
    if (!lease || !this.events.has('lost')) return;
    const now = performance.now();
    this.events.emit('lost', {
      ...eventBase(lease),
      lock,
      reason,
      error: error ?? this.name(new LockLostError(lock.key, reason), lease.keyTemplate),
      holdTime: now - lease.acquiredAt,
      ...pastDrain(lease, now),
    });
  }

  /**
   * A store operation other than an acquisition failed, for the lease `of` (or the acquisition, when it is
   * the release of a late grant).
   */
  storeError(
    operation: Exclude<LockStoreOperation, 'acquire'>,
    key: string,
    error: unknown,
    of?: Lock | AcquireTrace,
  ): void {
    const source = of instanceof AcquireTrace ? of : (of?.observed as Lease | undefined);
    const failure = this.name(asStoreError(operation, key, error), source?.keyTemplate);
    if (!this.events.has('store-error')) return;
    this.events.emit('store-error', {
      operation,
      error: failure,
      ...(source ? eventBase(source) : { key }),
    });
  }

  /** A call was skipped because its lock was busy. */
  skipped(label: string, error: LockNotAcquiredError, keyTemplate: string | undefined): void {
    if (!this.events.has('skipped')) return;
    this.events.emit('skipped', { key: error.key, keyTemplate: keyTemplate ?? DIRECT_KEY_TEMPLATE, label, error });
  }

  /** How long `lock` has been held, in ms, while its lease has not ended; `undefined` once it has. */
  heldFor(lock: Lock): number | undefined {
    const lease = lock.observed as Lease | undefined;
    return lease && !lease.ended ? performance.now() - lease.acquiredAt : undefined;
  }

  /** The key template `lock` was granted under, when it had one (not for a direct call without `metricKey`). */
  keyTemplateOf(lock: Lock): string | undefined {
    const template = (lock.observed as Lease | undefined)?.keyTemplate;
    return template === DIRECT_KEY_TEMPLATE ? undefined : template;
  }

  /** Marks a lease ended; `undefined` when it already was (each lease ends with one event), or is unknown. */
  private end(lock: Lock): Lease | undefined {
    const lease = lock.observed as Lease | undefined;
    if (!lease || lease.ended) return undefined;
    lease.ended = true;
    return lease;
  }
}

/** How long after the shutdown's drain a lease that outlived it ended, for its terminal event. */
function pastDrain(lease: Lease, now: number): { pastDrain?: number } {
  return lease.drainEndedAt === undefined ? {} : { pastDrain: now - lease.drainEndedAt };
}

function eventBase(source: LockEventBase): LockEventBase {
  return source.label === undefined
    ? { key: source.key, keyTemplate: source.keyTemplate }
    : { key: source.key, keyTemplate: source.keyTemplate, label: source.label };
}
