import { setTimeout as sleep } from 'node:timers/promises';
import type { PermitMode } from '../../lib/store.js';
import type { PermitAsk, PermitSession } from '../contenders/permits.js';
import { jainIndex, now, spread, type Spread } from '../support/stats.js';
import type { Grant } from './contention.js';

/** One critical section under a permit, as a worker lived it (times on the monotonic clock, ms). */
export interface PermitGrant extends Grant {
  /** The mode it held, on a readers-writer key. */
  readonly mode?: PermitMode;
  /** The event-loop turn in which the worker called acquire (see {@link loopTurn}). */
  readonly wantTurn: number;
}

let turns = 0;
let openTurn: number | undefined;

/**
 * A number for the event-loop turn the caller runs in: the same for every call until the loop's next check
 * phase (one `setImmediate`, scheduled only when asked, so the loop never spins). Callers of one turn, such as
 * workers whose timers fired together, send their requests in an order their call order does not decide.
 */
export function loopTurn(): number {
  if (openTurn === undefined) {
    openTurn = ++turns;
    setImmediate(() => (openTurn = undefined));
  }
  return openTurn;
}

/** A grant that broke the key's rule: who was inside when it began. */
export interface Violation {
  readonly at: number;
  readonly worker: number;
  readonly mode?: PermitMode;
  readonly readers: number;
  readonly writers: number;
  readonly inside: number;
}

/**
 * Who is inside the key right now, counted by the workers themselves between a grant and the call to release
 * (so a library that granted before the release reached it shows here): the most at once, readers over time,
 * and every grant that broke the semaphore's limit or the readers-writer rule.
 */
export class Occupancy {
  inside = 0;
  most = 0;
  mostReaders = 0;
  readonly violations: Violation[] = [];
  private readers = 0;
  private writers = 0;
  private lastChange = 0;
  /** Time with at least one reader inside, ms. */
  readerTime = 0;
  /** The integral of readers inside over time, reader·ms. */
  readerArea = 0;

  constructor(private readonly limit: number | undefined) {}

  enter(worker: number, mode: PermitMode | undefined, at: number): void {
    this.advance(at);
    const broken =
      mode === 'write' ? this.inside > 0 : mode === 'read' ? this.writers > 0 : this.inside >= (this.limit ?? Infinity);
    if (broken) {
      const violation = { at, worker, mode, readers: this.readers, writers: this.writers, inside: this.inside };
      this.violations.push(violation);
      console.error(`!!! PERMIT VIOLATION: ${JSON.stringify(violation)} (limit ${this.limit ?? 'read-write'})`);
    }
    this.inside++;
    if (mode === 'read') this.readers++;
    if (mode === 'write') this.writers++;
    this.most = Math.max(this.most, this.inside);
    this.mostReaders = Math.max(this.mostReaders, this.readers);
  }

  leave(mode: PermitMode | undefined, at: number): void {
    this.advance(at);
    this.inside--;
    if (mode === 'read') this.readers--;
    if (mode === 'write') this.writers--;
  }

  private advance(at: number): void {
    if (this.readers > 0) {
      this.readerTime += at - this.lastChange;
      this.readerArea += (at - this.lastChange) * this.readers;
    }
    this.lastChange = at;
  }
}

/** How a permit run is shaped. */
export interface PermitRunOptions {
  readonly key: string;
  /** Length of the critical section: `await setTimeout(csMs)`. */
  readonly csMs: number;
  /** What a worker asks for before each section (`draw(worker)`). */
  draw(worker: number): PermitAsk;
}

/** One worker's loop until `end`: draw, acquire, hold for the critical section, release, ask again at once. */
async function permitWorker(
  session: PermitSession,
  worker: number,
  options: PermitRunOptions,
  occupancy: Occupancy,
  end: number,
): Promise<PermitGrant[]> {
  const grants: PermitGrant[] = [];
  while (now() < end) {
    const ask = options.draw(worker);
    const mode = 'mode' in ask ? ask.mode : undefined;
    const wantAt = now();
    const wantTurn = loopTurn();
    const held = await session.acquire(options.key, ask);
    const acquiredAt = now();
    occupancy.enter(worker, mode, acquiredAt);
    await sleep(options.csMs);
    const releaseAt = now();
    occupancy.leave(mode, releaseAt);
    await held.release();
    grants.push({ worker, wantAt, wantTurn, acquiredAt, releaseAt, ...(mode ? { mode } : {}) });
  }
  return grants;
}

/** One run of `sessions.length` workers of this process on one key for `durationMs`. */
export interface PermitRun {
  /** Grants per worker. */
  readonly grants: PermitGrant[][];
  readonly occupancy: Occupancy;
}

/** Runs `sessions.length` workers (a session may be shared by several) for `durationMs`. */
export async function permitsInProcess(
  sessions: readonly PermitSession[],
  options: PermitRunOptions,
  limit: number | undefined,
  durationMs: number,
): Promise<PermitRun> {
  const occupancy = new Occupancy(limit);
  const end = now() + durationMs;
  const grants = await Promise.all(
    sessions.map((session, worker) => permitWorker(session, worker, options, occupancy, end)),
  );
  return { grants, occupancy };
}

/** Grants per second of the time the runs took (first request to last release, late grants included). */
function rateOf(runs: readonly PermitRun[]): { rate: number; grants: number } {
  let grants = 0;
  let span = 0;
  for (const run of runs) {
    const all = run.grants.flat();
    grants += all.length;
    if (all.length) {
      span +=
        all.reduce((latest, g) => Math.max(latest, g.releaseAt), -Infinity) -
        all.reduce((earliest, g) => Math.min(earliest, g.wantAt), Infinity);
    }
  }
  return { rate: span > 0 ? (grants / span) * 1000 : NaN, grants };
}

/** What a semaphore run shows. */
export interface SemaphoreSummary {
  readonly rate: number;
  readonly grants: number;
  /** From the release that freed a permit to the grant of it to a worker that was waiting then, ms. */
  readonly gap: Spread;
  /** From calling acquire to holding a permit, ms. */
  readonly wait: Spread;
  readonly jain: number;
  readonly most: number;
  readonly violations: number;
}

/**
 * Sums up semaphore runs. With at most `limit` inside, the k-th grant of a run (by time) can only use the permit
 * that the (k − limit)-th release (by time) freed: its gap is the time between the two, counted when the
 * grantee was already waiting at that release (the hand-off latency of a freed permit, as the mutex scenarios'
 * gap). Gaps are taken within a run only.
 */
export function summarizeSemaphore(runs: readonly PermitRun[], limit: number): SemaphoreSummary {
  const gaps: number[] = [];
  const waits: number[] = [];
  const perWorker: number[] = [];
  let most = 0;
  let violations = 0;
  for (const run of runs) {
    run.grants.forEach((mine, worker) => (perWorker[worker] = (perWorker[worker] ?? 0) + mine.length));
    const grants = run.grants.flat().sort((a, b) => a.acquiredAt - b.acquiredAt);
    const releases = grants.map((g) => g.releaseAt).sort((a, b) => a - b);
    grants.forEach((grant, k) => {
      waits.push(grant.acquiredAt - grant.wantAt);
      const freedAt = releases[k - limit];
      if (freedAt !== undefined && grant.wantAt < freedAt) gaps.push(grant.acquiredAt - freedAt);
    });
    most = Math.max(most, run.occupancy.most);
    violations += run.occupancy.violations.length;
  }
  return { ...rateOf(runs), gap: spread(gaps), wait: spread(waits), jain: jainIndex(perWorker), most, violations };
}

/** What a readers-writer run shows. */
export interface ReadersWriterSummary {
  readonly rate: number;
  readonly grants: number;
  readonly writes: number;
  /** Share of write grants, %. */
  readonly writeShare: number;
  readonly mostReaders: number;
  /** Readers inside while any reader is, time-weighted, over all runs. */
  readonly meanReaders: number;
  readonly writerWait: Spread;
  readonly readerWait: Spread;
  /** Writers that some reader asking after them got in before. */
  readonly overtakenWriters: number;
  /** The most readers that asked after one writer and got in before it. */
  readonly mostOvertakes: number;
  /**
   * How long after a writer asked the latest reader that got in before it asked, ms (0 when none did): the
   * longest stretch of a writer's wait in which it was still overtaken.
   */
  readonly overtakenFor: number;
  /** Writers that a reader asking in a later event-loop turn got in before (writer preference says none). */
  readonly overtakenByLaterTurn: number;
  /** The most readers that asked before one writer and got in while it waited (ahead of it in line). */
  readonly mostEarlierReaders: number;
  readonly jain: number;
  readonly violations: number;
}

export function summarizeReadersWriter(runs: readonly PermitRun[]): ReadersWriterSummary {
  const perWorker: number[] = [];
  const writerWaits: number[] = [];
  const readerWaits: number[] = [];
  let writes = 0;
  let overtakenWriters = 0;
  let mostOvertakes = 0;
  let overtakenFor = 0;
  let overtakenByLaterTurn = 0;
  let mostEarlierReaders = 0;
  let mostReaders = 0;
  let violations = 0;
  let readerTime = 0;
  let readerArea = 0;
  for (const run of runs) {
    run.grants.forEach((mine, worker) => (perWorker[worker] = (perWorker[worker] ?? 0) + mine.length));
    const all = run.grants.flat();
    const reads = all.filter((g) => g.mode === 'read');
    for (const g of reads) readerWaits.push(g.acquiredAt - g.wantAt);
    for (const writer of all.filter((g) => g.mode === 'write')) {
      writes++;
      writerWaits.push(writer.acquiredAt - writer.wantAt);
      const during = reads.filter((r) => r.acquiredAt > writer.wantAt && r.acquiredAt < writer.acquiredAt);
      const later = during.filter((r) => r.wantAt > writer.wantAt);
      if (later.length > 0) overtakenWriters++;
      if (later.some((reader) => reader.wantTurn > writer.wantTurn)) overtakenByLaterTurn++;
      mostOvertakes = Math.max(mostOvertakes, later.length);
      for (const reader of later) overtakenFor = Math.max(overtakenFor, reader.wantAt - writer.wantAt);
      mostEarlierReaders = Math.max(mostEarlierReaders, during.length - later.length);
    }
    mostReaders = Math.max(mostReaders, run.occupancy.mostReaders);
    violations += run.occupancy.violations.length;
    readerTime += run.occupancy.readerTime;
    readerArea += run.occupancy.readerArea;
  }
  const { rate, grants } = rateOf(runs);
  return {
    rate,
    grants,
    writes,
    writeShare: grants ? (writes / grants) * 100 : NaN,
    mostReaders,
    meanReaders: readerTime > 0 ? readerArea / readerTime : NaN,
    writerWait: spread(writerWaits),
    readerWait: spread(readerWaits),
    overtakenWriters,
    mostOvertakes,
    overtakenFor,
    overtakenByLaterTurn,
    mostEarlierReaders,
    jain: jainIndex(perWorker),
    violations,
  };
}
