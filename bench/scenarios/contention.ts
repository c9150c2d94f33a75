import { setTimeout as sleep } from 'node:timers/promises';
import type { Session } from '../libraries.js';
import { jainIndex, now, spread, type Spread } from '../support/stats.js';

/** One critical section as a worker lived it (times on the shared monotonic clock, ms). */
export interface Grant {
  readonly worker: number;
  /** When the worker called acquire. */
  readonly wantAt: number;
  /** When its acquire resolved. */
  readonly acquiredAt: number;
  /** When it called release (the critical section ended). */
  readonly releaseAt: number;
}

/** How a contention run is shaped. */
export interface ContentionOptions {
  readonly key: string;
  /** Length of the critical section: `await setTimeout(csMs)`. */
  readonly csMs: number;
  /** Handoff mode: after releasing, a worker waits until another worker has taken the key before asking again. */
  readonly handoff: boolean;
}

/** Lets a releaser wait until some other worker has taken the key (the handoff rule). */
export interface Board {
  acquired(worker: number): void;
  letOthersTake(worker: number): Promise<void>;
}

/** The handoff rule inside one process; `stop()` frees every parked worker at the end of the run. */
export class LocalBoard implements Board {
  private lastHolder = -1;
  private stopped = false;
  private readonly parked = new Map<number, () => void>();

  acquired(worker: number): void {
    this.lastHolder = worker;
    for (const [waiting, resume] of this.parked) {
      if (waiting === worker) continue;
      this.parked.delete(waiting);
      resume();
    }
  }

  letOthersTake(worker: number): Promise<void> {
    if (this.lastHolder !== worker || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.parked.set(worker, resolve));
  }

  stop(): void {
    this.stopped = true;
    for (const resume of this.parked.values()) resume();
    this.parked.clear();
  }
}

/** One worker's loop until `end`: acquire, hold for the critical section, release; in handoff mode, step aside. */
export async function contend(
  session: Session,
  worker: number,
  options: ContentionOptions,
  end: number,
  board?: Board,
): Promise<Grant[]> {
  const grants: Grant[] = [];
  while (now() < end) {
    const wantAt = now();
    const held = await session.acquire(options.key);
    const acquiredAt = now();
    board?.acquired(worker);
    await sleep(options.csMs);
    const releaseAt = now();
    await held.release();
    grants.push({ worker, wantAt, acquiredAt, releaseAt });
    if (options.handoff && board && now() < end) await board.letOthersTake(worker);
  }
  return grants;
}

/** Runs `sessions.length` workers in this process (a session may be shared by several) for `durationMs`. */
export async function contendInProcess(
  sessions: readonly Session[],
  options: ContentionOptions,
  durationMs: number,
): Promise<Grant[][]> {
  const board = new LocalBoard();
  const end = now() + durationMs;
  const stopper = setTimeout(() => board.stop(), durationMs + 1);
  try {
    return await Promise.all(sessions.map((session, worker) => contend(session, worker, options, end, board)));
  } finally {
    clearTimeout(stopper);
  }
}

/** What a contention run shows. */
export interface ContentionSummary {
  /** Grants per second of the time the runs took (first request to last release, late grants included). */
  readonly csPerSecond: number;
  readonly grants: number;
  /** From a holder calling release to the next holder's acquire resolving, ms. */
  readonly gap: Spread;
  /** From calling acquire to holding the key, ms. */
  readonly wait: Spread;
  readonly jain: number;
  /** Grants whose holder took the key from itself (no other worker in between). */
  readonly selfHandoffs: number;
  /** Grants that began before the previous holder called release: must be 0 for a correct lock. */
  readonly overlaps: number;
  /** Mean measured length of the critical section, ms. */
  readonly csMean: number;
}

/**
 * Sums up one or more runs of the same workers (`runs[r][worker]` = that worker's grants in run r); gaps are
 * taken within a run only. A worker that asked before the end of its run keeps waiting until it is served, so
 * the rate counts the time each run really took: a library whose waiters sleep seconds is not flattered by
 * the grants that come after the nominal end.
 */
export function summarize(runs: readonly (readonly Grant[][])[]): ContentionSummary {
  const gaps: number[] = [];
  const waits: number[] = [];
  const perWorker: number[] = [];
  let overlaps = 0;
  let selfHandoffs = 0;
  let count = 0;
  let csTotal = 0;
  let span = 0;
  for (const run of runs) {
    run.forEach((mine, worker) => (perWorker[worker] = (perWorker[worker] ?? 0) + mine.length));
    const grants = run.flat().sort((a, b) => a.acquiredAt - b.acquiredAt);
    count += grants.length;
    if (grants.length) {
      const lastRelease = grants.reduce((latest, g) => Math.max(latest, g.releaseAt), -Infinity);
      span += lastRelease - grants.reduce((earliest, g) => Math.min(earliest, g.wantAt), Infinity);
    }
    for (let i = 0; i < grants.length; i++) {
      waits.push(grants[i].acquiredAt - grants[i].wantAt);
      csTotal += grants[i].releaseAt - grants[i].acquiredAt;
      if (i === 0) continue;
      const gap = grants[i].acquiredAt - grants[i - 1].releaseAt;
      if (gap < 0) overlaps++;
      if (grants[i].worker === grants[i - 1].worker) selfHandoffs++;
      else gaps.push(gap);
    }
  }
  return {
    csPerSecond: span > 0 ? (count / span) * 1000 : NaN,
    grants: count,
    gap: spread(gaps),
    wait: spread(waits),
    jain: jainIndex(perWorker),
    selfHandoffs,
    overlaps,
    csMean: count ? csTotal / count : NaN,
  };
}
