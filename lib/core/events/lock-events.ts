import type { LockLostError, LockLostReason } from '../../errors/lock-lost.error.js';
import type { LockNotAcquiredError } from '../../errors/lock-not-acquired.error.js';
import type { LockStoreError } from '../../errors/lock-store.error.js';
import type { LockLogger } from '../../interfaces/lock-options.interface.js';
import type { Lock } from '../lock.js';
import type { LeadershipEventMap } from '../../leadership/leadership-events.js';

/** What every lock event tells about the resource it concerns. */
export interface LockEventBase {
  /** The resource key, as the caller named it. */
  readonly key: string;
  /**
   * The key's bounded name for dashboards: the `@WithLock` key template (`'inventory:<productId>'`), the
   * `metricKey` option of a direct call, or `'direct'`.
   */
  readonly keyTemplate: string;
  /** Who asked: `Class.method` for `@WithLock`, the `label` option of a direct call. */
  readonly label?: string;
}

/** A lease was granted. */
export interface LockAcquiredEvent extends LockEventBase {
  readonly lock: Lock;
  /** The fence granted with the lease, when fencing is on. */
  readonly fence?: number;
  /** Lease length in ms. */
  readonly ttl: number;
  /** Time from the call to the grant, in ms (waiting included). */
  readonly waitTime: number;
  /** How many times the store was asked. */
  readonly attempts: number;
}

/** An acquisition found the key held. Always followed by `waited` (or by `store-error` if the store fails). */
export interface LockContendedEvent extends LockEventBase {
  /** The holder's remaining lease in ms, when known. */
  readonly remainingTtl?: number;
  /** How long this acquisition will wait for it, in ms (`0`: it gives up now). */
  readonly wait: number;
}

/** A contended acquisition stopped waiting: it got the lock (`acquired` follows) or gave up. */
export interface LockWaitedEvent extends LockEventBase {
  readonly acquired: boolean;
  /** Time from the call until the wait ended, in ms. */
  readonly waitTime: number;
  /** How many times the store was asked. */
  readonly attempts: number;
}

/**
 * A grant reached this process only after the lease's validity had ended (the store answered too late, or
 * the event loop was blocked while the answer waited): another owner may hold the key already, so the
 * grant was released (token-checked) and never handed to the caller. No `acquired` follows for it; the
 * acquisition tries again within its wait, or fails with a `LockStoreError`.
 */
export interface LockLateGrantEvent extends LockEventBase {
  /** How many ms after the lease's validity ended the grant was read. */
  readonly lateBy: number;
  /** Time from sending the request to reading the grant, in ms. */
  readonly elapsed: number;
  /** The lease length asked for, in ms. */
  readonly ttl: number;
  /** Whether the acquisition tries again (its wait has time left); if not, it fails with a `LockStoreError`. */
  readonly retrying: boolean;
}

/** The holder extended its lease with `lock.extend()`. */
export interface LockExtendedEvent extends LockEventBase {
  readonly lock: Lock;
  /** The new lease length, in ms from the extension. */
  readonly ttl: number;
}

/** The renewal scheduler renewed an auto-renewed lease. */
export interface LockRenewedEvent extends LockEventBase {
  readonly lock: Lock;
  readonly ttl: number;
}

/** A lease ended before its holder released it; the work it guards may no longer be exclusive. */
export interface LockLostEvent extends LockEventBase {
  readonly lock: Lock;
  /** Why it ended; never `shutdown`, which is no loss (see `outlived-drain`). */
  readonly reason: LockLostReason;
  /**
   * The error of the loss: what the holder's `signal` aborted with, unless the shutdown had asked the holder
   * to stop before (for a loss found at release, one made then).
   */
  readonly error: LockLostError;
  /** How long the lease was held, in ms. */
  readonly holdTime: number;
  /** For a lease that outlived the shutdown's drain: how long after the drain's end it was lost, in ms. */
  readonly pastDrain?: number;
}

/**
 * The holder let its lease go. When the store could not be told, a `store-error` came first and the lease
 * ends by its TTL.
 */
export interface LockReleasedEvent extends LockEventBase {
  readonly lock: Lock;
  /** How long the lease was held, in ms, until the store answered the release. */
  readonly holdTime: number;
  /**
   * With `holdAtLeast`, or for a scheduled run's claim on its tick: the lease was kept this many more ms instead
   * of being deleted.
   */
  readonly keptFor?: number;
  /** For a lease that outlived the shutdown's drain: how long after the drain's end it was released, in ms. */
  readonly pastDrain?: number;
}

/**
 * The shutdown's drain ended while the lease was still held (a section still running, or a lock from
 * `acquire()` not released yet). Its `signal` aborted with reason `shutdown`; the lease stays held (and
 * renewed, if it was) until its holder releases it or the process exits, and then ends with `released` or
 * `lost` (with `pastDrain`).
 */
export interface LockOutlivedDrainEvent extends LockEventBase {
  readonly lock: Lock;
  /** How long the lease has been held, in ms. */
  readonly holdTime: number;
  /** How long the drain let holders finish, in ms (`drainTimeout`). */
  readonly drainTimeout: number;
}

/**
 * A call whose lock was busy was skipped by its contention policy (`@WithLock` with `onContention: 'skip'`, the
 * default of a scheduled method), or a scheduled call whose tick another instance had claimed (then `error.key`
 * is the claim's key, `tick:<Class.method>:<keys>`).
 */
export interface LockSkippedEvent extends LockEventBase {
  readonly label: string;
  readonly error: LockNotAcquiredError;
}

/** What the store was doing when it failed. */
export type LockStoreOperation = 'acquire' | 'extend' | 'renew' | 'release' | 'inspect';

/** The lock store failed. An `acquire` failure ends that acquisition; other operations say what follows. */
export interface LockStoreErrorEvent {
  readonly operation: LockStoreOperation;
  readonly error: LockStoreError;
  /** The resource concerned. */
  readonly key: string;
  /** As in other events; absent for `inspect`. */
  readonly keyTemplate?: string;
  readonly label?: string;
  /** For `acquire`: time from the call until the failure, in ms. */
  readonly waitTime?: number;
}

/**
 * Every lock event by name, the leadership events among them. As Nest events (with `@nestjs/event-emitter`)
 * they are named `lock.<name>`.
 */
export interface LockEventMap extends LeadershipEventMap {
  acquired: LockAcquiredEvent;
  contended: LockContendedEvent;
  waited: LockWaitedEvent;
  'late-grant': LockLateGrantEvent;
  extended: LockExtendedEvent;
  renewed: LockRenewedEvent;
  lost: LockLostEvent;
  released: LockReleasedEvent;
  'outlived-drain': LockOutlivedDrainEvent;
  skipped: LockSkippedEvent;
  'store-error': LockStoreErrorEvent;
}

/** The name of a lock event. */
export type LockEventName = keyof LockEventMap;

/**
 * What the lock event `E` carries (`LockEvent<'lost'>`: the lost lock, why, and the error its signal aborted with).
 * @example
 * ```ts
 * @OnEvent('lock.lost')
 * onLost(event: LockEvent<'lost'>) { ... }
 * ```
 */
export type LockEvent<E extends LockEventName = LockEventName> = LockEventMap[E];

/** A listener of one lock event; what it returns is ignored, a rejected promise is logged. */
export type LockEventListener<E extends LockEventName> = (event: LockEventMap[E]) => unknown;

/** Every event name, in the order of a lease's life, then those of a leadership's. */
export const LOCK_EVENT_NAMES: readonly LockEventName[] = Object.freeze([
  'contended',
  'late-grant',
  'waited',
  'acquired',
  'extended',
  'renewed',
  'outlived-drain',
  'lost',
  'released',
  'skipped',
  'store-error',
  'elected',
  'leadership-lost',
  'resigned',
]);

/**
 * The typed event hub of one `LockManager`. Listeners run synchronously, in subscription order, in the
 * async context of the lock operation; whatever a listener throws or rejects with is logged and never
 * reaches the lock operation.
 */
export class LockEvents {
  private readonly listeners = new Map<LockEventName, ReadonlyArray<(event: never) => unknown>>();

  constructor(private readonly logger?: LockLogger) {}

  /** Subscribes `listener` to `event`; the returned function unsubscribes it (once is enough). */
  on<E extends LockEventName>(event: E, listener: LockEventListener<E>): () => void {
    if (!LOCK_EVENT_NAMES.includes(event)) {
      throw new TypeError(`Unknown lock event "${String(event)}"; expected one of ${LOCK_EVENT_NAMES.join(', ')}.`);
    }
    if (typeof listener !== 'function') throw new TypeError(`A listener of "${event}" must be a function.`);
    // copy on write: an emit in progress keeps the list it started with
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      const remaining = (this.listeners.get(event) ?? []).filter((l) => l !== listener);
      if (remaining.length > 0) this.listeners.set(event, remaining);
      else this.listeners.delete(event);
    };
  }

  /** Whether anyone listens to `event` (so the payload need not be built). */
  has(event: LockEventName): boolean {
    return this.listeners.has(event);
  }

  /** Calls every listener of `event` with `payload`; never throws. */
  emit<E extends LockEventName>(event: E, payload: LockEventMap[E]): void {
    const listeners = this.listeners.get(event);
    if (!listeners) return;
    for (const listener of listeners) {
      try {
        const result = (listener as LockEventListener<E>)(payload);
        if (isThenable(result)) result.then(undefined, (error: unknown) => this.listenerFailed(event, error));
      } catch (error) {
        this.listenerFailed(event, error);
      }
    }
  }

  private listenerFailed(event: LockEventName, error: unknown): void {
    try {
      this.logger?.error(
        `A listener of the lock "${event}" event failed (the lock is not affected): ${describe(error)}`,
      );
    } catch {
      // a logger that throws must not break the lock operation either
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
}
