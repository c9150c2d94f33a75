import type { Attributes, Meter, ObservableCallback } from '@opentelemetry/api';
import type { LockEventListener, LockEventName } from '../core/events/lock-events.js';
import { LOCK_METRICS } from './lock-metrics.js';

const TERM_BUCKETS = [1, 5, 10, 30, 60, 300, 900, 3600, 6 * 3600, 24 * 3600, 7 * 24 * 3600];

/** How the metrics subscribe to the manager's events. */
type Subscribe = <E extends LockEventName>(event: E, listener: LockEventListener<E>) => void;

/**
 * The leadership metrics of one `LockManager` ({@link LOCK_METRICS} `leader`, `leaderTerm`,
 * `leadershipDuration`), recorded from its leadership events, by leadership name (`lock.leadership`: the
 * application's own constants, so bounded) and store.
 */
export class LeadershipMetrics {
  /** The term each leadership this process campaigned for is led with, or `undefined` while it follows. */
  private readonly terms = new Map<string, number | undefined>();
  private readonly observeLeader: ObservableCallback = (result) => {
    for (const [name, term] of this.terms) result.observe(term === undefined ? 0 : 1, this.attributes(name));
  };
  private readonly observeTerm: ObservableCallback = (result) => {
    for (const [name, term] of this.terms) if (term !== undefined) result.observe(term, this.attributes(name));
  };
  private readonly leader;
  private readonly term;

  constructor(
    meter: Meter,
    private readonly storeName: string,
    on: Subscribe,
  ) {
    this.leader = meter.createObservableUpDownCounter(LOCK_METRICS.leader, {
      unit: '{leadership}',
      description: 'Whether this process leads the leadership (1) or follows (0).',
    });
    this.term = meter.createObservableGauge(LOCK_METRICS.leaderTerm, {
      unit: '{term}',
      description: 'The term this process leads the leadership with.',
    });
    const duration = meter.createHistogram(LOCK_METRICS.leadershipDuration, {
      unit: 's',
      description: 'How long a term lasted in this process, until it resigned or lost it.',
      advice: { explicitBucketBoundaries: TERM_BUCKETS },
    });
    this.leader.addCallback(this.observeLeader);
    this.term.addCallback(this.observeTerm);
    on('elected', ({ name, term }) => this.terms.set(name, term));
    on('resigned', ({ name, cause, duration: ms }) => {
      this.terms.set(name, undefined);
      duration.record(ms / 1000, {
        ...this.attributes(name),
        'lock.leadership.outcome': 'resigned',
        'lock.leadership.cause': cause,
      });
    });
    on('leadership-lost', ({ name, reason, duration: ms }) => {
      this.terms.set(name, undefined);
      duration.record(ms / 1000, {
        ...this.attributes(name),
        'lock.leadership.outcome': 'lost',
        'lock.lost.reason': reason,
      });
    });
  }

  /** Stops observing (the manager's listeners are removed by the caller). */
  detach(): void {
    this.leader.removeCallback(this.observeLeader);
    this.term.removeCallback(this.observeTerm);
  }

  private attributes(name: string): Attributes {
    return { 'lock.leadership': name, 'lock.store': this.storeName };
  }
}
