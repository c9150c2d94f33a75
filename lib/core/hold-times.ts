/** Past this many key templates, the one used least recently is forgotten. */
const MAX_TEMPLATES = 1000;

interface Estimate {
  /** Smoothed hold time, in ms. */
  average: number;
  /** Smoothed mean deviation from it, in ms. */
  deviation: number;
}

/**
 * How long holders of each key template usually keep their lock, from the holds this process saw end:
 * the estimator TCP uses for its retransmission timeout (RFC 6298): a smoothed average with weight 1/8 for
 * each new hold, a smoothed deviation with weight 1/4, and "usually" as the average plus four deviations,
 * which covers nearly every hold without following a single outlier. Two numbers per template; templates
 * are bounded (resolved keys, which are not, never get an entry), and past {@link MAX_TEMPLATES} the least
 * recently used is dropped.
 */
export class HoldTimes {
  private readonly estimates = new Map<string, Estimate>();

  constructor(private readonly capacity = MAX_TEMPLATES) {}

  /** Counts a hold of `ms` under `template`. */
  record(template: string, ms: number): void {
    const estimate = this.estimates.get(template);
    // re-inserted on every hold, so the map's first entry is always the one used least recently
    this.estimates.delete(template);
    if (!estimate) {
      this.estimates.set(template, { average: ms, deviation: ms / 2 });
      if (this.estimates.size > this.capacity) this.estimates.delete(this.estimates.keys().next().value as string);
      return;
    }
    estimate.deviation = (3 * estimate.deviation + Math.abs(ms - estimate.average)) / 4;
    estimate.average = (7 * estimate.average + ms) / 8;
    this.estimates.set(template, estimate);
  }

  /** How long a hold under `template` usually lasts, in ms; `undefined` before the first one ended. */
  usual(template: string): number | undefined {
    const estimate = this.estimates.get(template);
    return estimate && Math.ceil(estimate.average + 4 * estimate.deviation);
  }
}
