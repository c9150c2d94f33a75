import type { LockManager } from '../core/lock-manager.js';

/** The most key templates the statistics keep: templates come from code, but a bound keeps memory flat. */
const MAX_TEMPLATES = 500;

/** Hold and wait times of one key template since the application started, in ms. */
export interface TemplateStatistics {
  readonly keyTemplate: string;
  /** Leases granted. */
  readonly acquired: number;
  /** Leases released (or lost) whose hold time is counted. */
  readonly ended: number;
  readonly holdAverage: number;
  readonly holdMax: number;
  readonly waitAverage: number;
  readonly waitMax: number;
}

interface Tally {
  acquired: number;
  ended: number;
  holdTotal: number;
  holdMax: number;
  waitTotal: number;
  waitMax: number;
}

/**
 * Hold and wait times per key template, from the module's own events (`acquired`, `released`, `lost`): what the
 * page shows beside the held locks. Keyed by template, never by resolved key.
 */
export class AdminStatistics {
  private readonly tallies = new Map<string, Tally>();
  private readonly detach: Array<() => void>;

  constructor(locks: LockManager) {
    this.detach = [
      locks.on('acquired', ({ keyTemplate, waitTime }) => {
        const tally = this.tallyOf(keyTemplate);
        if (!tally) return;
        tally.acquired++;
        tally.waitTotal += waitTime;
        tally.waitMax = Math.max(tally.waitMax, waitTime);
      }),
      locks.on('released', ({ keyTemplate, holdTime }) => this.ended(keyTemplate, holdTime)),
      locks.on('lost', ({ keyTemplate, holdTime }) => this.ended(keyTemplate, holdTime)),
    ];
  }

  /** Every template seen, busiest first. */
  snapshot(): TemplateStatistics[] {
    return [...this.tallies]
      .map(([keyTemplate, tally]) => ({
        keyTemplate,
        acquired: tally.acquired,
        ended: tally.ended,
        holdAverage: tally.ended === 0 ? 0 : Math.round(tally.holdTotal / tally.ended),
        holdMax: Math.round(tally.holdMax),
        waitAverage: tally.acquired === 0 ? 0 : Math.round(tally.waitTotal / tally.acquired),
        waitMax: Math.round(tally.waitMax),
      }))
      .sort((a, b) => b.acquired - a.acquired);
  }

  /** Stops listening. */
  close(): void {
    for (const off of this.detach.splice(0)) off();
  }

  private ended(keyTemplate: string, holdTime: number): void {
    const tally = this.tallyOf(keyTemplate);
    if (!tally) return;
    tally.ended++;
    tally.holdTotal += holdTime;
    tally.holdMax = Math.max(tally.holdMax, holdTime);
  }

  /** The tally of a template; `undefined` for a new one past the bound. */
  private tallyOf(keyTemplate: string): Tally | undefined {
    let tally = this.tallies.get(keyTemplate);
    if (!tally && this.tallies.size < MAX_TEMPLATES) {
      tally = { acquired: 0, ended: 0, holdTotal: 0, holdMax: 0, waitTotal: 0, waitMax: 0 };
      this.tallies.set(keyTemplate, tally);
    }
    return tally;
  }
}
