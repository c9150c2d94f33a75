import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startChild, type ChildHandle } from '../support/child-process.js';
import {
  FencedResource,
  HolderCensus,
  LostUpdateCounter,
  mayShare,
  type CensusReport,
  type InvariantReport,
} from '../support/invariants.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import type { FaultClient, WorkerConfig, WorkerResult } from './worker.js';

const workerFile = fileURLToPath(new URL('./worker.ts', import.meta.url));

/**
 * The client libraries the Redis rows run on: every row on ioredis, the rows that reach the client's own
 * handling of a fault (a crash, a restart, a frozen server, a cut connection) on the others too.
 */
export const FAULT_CLIENTS: readonly FaultClient[] = ['ioredis', 'node-redis', 'iovalkey', 'glide'];

/** A row's label on `client`: ioredis' rows keep their names, the others say their client. */
export function onClient(name: string, client: FaultClient): string {
  return client === 'ioredis' ? name : `${name} (${client})`;
}

/** How a scenario runs its worker processes and judges what they did. */
export interface ScenarioOptions {
  /** The row label in the fault table. */
  readonly name: string;
  readonly processes: number;
  /** The lock Redis as the workers reach it (directly or through a proxy); unused with `worker.etcdHosts` or `worker.postgresUrl`. */
  readonly lockUrl: string;
  /** Settings of every worker; `perWorker` overrides some for worker `index`. */
  readonly worker: Pick<WorkerConfig, 'sections' | 'holdMs' | 'ttl' | 'wait' | 'commandTimeout'> &
    Partial<
      Pick<
        WorkerConfig,
        | 'retry'
        | 'announce'
        | 'deadlineMs'
        | 'maxRetriesPerRequest'
        | 'gapMs'
        | 'bypassLock'
        | 'pauseAt'
        | 'etcdHosts'
        | 'postgresUrl'
        | 'permits'
        | 'lead'
        | 'client'
      >
    >;
  readonly perWorker?: (index: number) => Partial<WorkerConfig>;
  /** The whole run, from `go` to the last result, must end within this many ms. */
  readonly boundMs: number;
  /**
   * Whether the fault can end leases under their holders (stalls, data loss): then overlapping holders may
   * happen but each must be detected (the stale holder told); otherwise any overlap is a violation.
   */
  readonly leasesCanBeLost: boolean;
  /**
   * Whether the unfenced counter must stay exact. Not when Redis itself forgets leases: that is the case
   * fencing exists for, and the counter then shows what an unfenced resource would suffer.
   */
  readonly unfencedMustHold?: boolean;
}

/** What a finished scenario found. */
export interface ScenarioOutcome {
  readonly results: WorkerResult[];
  readonly report: InvariantReport;
  /** Who was inside with whom, when the workers take permits (`worker.permits`). */
  readonly census: CensusReport;
  /** Every broken invariant, described; empty when all held. */
  readonly violations: string[];
  /** From `go` to the last result. */
  readonly elapsedMs: number;
  /** Tokens found in the workers' logs (stdout and stderr). */
  readonly leakedTokens: number;
  /** Characters of log output searched for tokens. */
  readonly logChars: number;
}

/** A row of the fault table, appended to `FAULT_REPORT_FILE` by each scenario test. */
export interface FaultRow {
  readonly scenario: string;
  readonly processes: number;
  readonly operations: number;
  readonly sections: number;
  readonly faults: string;
  /** The three below are left out for checks that are not lock-holder scenarios. */
  readonly staleRefused?: number;
  readonly overlaps?: number;
  readonly lostSignalled?: number;
  readonly violations: number;
  readonly seconds: number;
  readonly notes?: string;
}

/** Appends a row to the fault table the reporter prints at the end of `npm run test:faults`. */
export function recordRow(row: FaultRow): void {
  const file = process.env.FAULT_REPORT_FILE;
  if (!file) return;
  const { currentTestName, testPath } = expect.getState();
  appendFileSync(file, `${JSON.stringify({ ...row, test: currentTestName, file: testPath })}\n`);
}

/**
 * Several worker processes contending for one lock while the test injects faults. Each worker reports its
 * own unhandled rejections; one in the test process fails the test by itself (jest-circus).
 */
export class Scenario {
  readonly checkerPrefix = uniquePrefix();
  readonly data = new Redis(testRedisUrl());
  readonly counter = new LostUpdateCounter(this.data, this.checkerPrefix);
  readonly resource = new FencedResource(this.data, this.checkerPrefix);
  readonly census: HolderCensus;
  readonly children: ChildHandle[] = [];
  private readonly killed = new Set<number>();
  private readonly dir = mkdtempSync(join(tmpdir(), 'nestjs-lock-faults-'));
  private readonly tokensFile = join(this.dir, 'tokens');
  private startedAt = 0;

  private constructor(readonly options: ScenarioOptions) {
    this.census = new HolderCensus(this.data, this.checkerPrefix, options.worker.permits?.limit);
    writeFileSync(this.tokensFile, '');
  }

  /** Starts the workers and waits until each is ready (connected, scripts loaded). */
  static async start(options: ScenarioOptions): Promise<Scenario> {
    const scenario = new Scenario(options);
    const keyPrefix = uniquePrefix();
    for (let index = 0; index < options.processes; index++) {
      const config: WorkerConfig = {
        id: `p${index}`,
        lockUrl: options.lockUrl,
        dataUrl: testRedisUrl(),
        checkerPrefix: scenario.checkerPrefix,
        keyPrefix,
        resource: 'faults:resource',
        // a worker still busy at 80% of the bound is stuck; it stops so that the test can say so
        deadlineMs: Math.round(options.boundMs * 0.8),
        tokensFile: scenario.tokensFile,
        ...options.worker,
        ...options.perWorker?.(index),
      };
      scenario.children.push(startChild(workerFile, { WORKER_CONFIG: JSON.stringify(config) }));
    }
    try {
      await Promise.all(scenario.children.map((child) => child.waitFor('ready', 60_000)));
    } catch (error) {
      await scenario.close();
      throw error;
    }
    return scenario;
  }

  /** Lets every worker begin. */
  go(): void {
    this.startedAt = performance.now();
    for (const child of this.children) child.send('go');
  }

  /** Asks every worker to finish its current call and report. */
  stop(): void {
    for (const child of this.children) child.send('stop');
  }

  /** Resolves when worker `index` prints `entered` for its section `n`. */
  entered(index: number, n: number, timeout = 20_000): Promise<void> {
    return this.children[index].waitFor(`entered p${index}:${n}\n`, timeout);
  }

  /** Lets a worker paused inside its `pauseAt` section go on. */
  resume(index: number): void {
    this.children[index].send('continue');
  }

  /** Resolves once at least `count` sections are inside at once (an overlap the checkers will judge). */
  async inside(count: number, timeout = 20_000): Promise<void> {
    const deadline = performance.now() + timeout;
    while ((await this.checker.inside()).length < count) {
      if (performance.now() > deadline) throw new Error(`fewer than ${count} sections inside within ${timeout} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Resolves once every section inside now, but `kept`, has left: each made its writes on its way out. */
  async othersLeft(kept: string, timeout = 20_000): Promise<void> {
    const deadline = performance.now() + timeout;
    const others = (await this.checker.inside()).filter((sid) => sid !== kept);
    while ((await this.checker.inside()).some((sid) => others.includes(sid))) {
      if (performance.now() > deadline) throw new Error(`${others.join(', ')} still inside after ${timeout} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Kills worker `index` with SIGKILL, as a crash would; returns the sections it was inside. */
  async kill(index: number): Promise<string[]> {
    this.killed.add(index);
    await this.children[index].kill('SIGKILL');
    return this.checker.forgetKilled(`p${index}`);
  }

  /** What counts who is inside: the census on a key shared by permits, else the fenced resource. */
  private get checker(): HolderCensus | FencedResource {
    return this.options.worker.permits ? this.census : this.resource;
  }

  /** Waits for every live worker's result (at most until the scenario's bound) and judges the run. */
  async finish(): Promise<ScenarioOutcome> {
    const live = this.children.filter((_, index) => !this.killed.has(index));
    const remaining = Math.max(1000, this.options.boundMs - (performance.now() - this.startedAt));
    const results = await Promise.all(
      live.map(async (child) => {
        await child.waitFor('result ', remaining);
        await new Promise<void>((resolve) =>
          child.process.exitCode !== null ? resolve() : child.process.once('exit', () => resolve()),
        );
        const line = child
          .output()
          .split('\n')
          .find((text) => text.startsWith('result '));
        return JSON.parse(line!.slice('result '.length)) as WorkerResult;
      }),
    );
    const elapsedMs = performance.now() - this.startedAt;
    const report = await this.resource.report(this.counter);
    const census = await this.census.report();
    const { leaked, chars } = this.leakedTokens();
    return {
      results,
      report,
      census,
      violations: [...this.judge(results, report, elapsedMs, leaked), ...this.judgeCrowds(census)],
      elapsedMs,
      leakedTokens: leaked,
      logChars: chars,
    };
  }

  /** Appends this scenario's row to the fault table. */
  record(outcome: ScenarioOutcome, faults: string, notes?: string): void {
    const { results, report, census } = outcome;
    const shared = this.options.worker.permits !== undefined;
    const sections = shared ? census.sections : report.sections;
    recordRow({
      scenario: this.options.name,
      processes: this.options.processes,
      // a killed worker reports nothing: count the calls that got it into a section
      operations:
        results.reduce((sum, r) => sum + r.attempts, 0) +
        sections.filter((s) => [...this.killed].some((index) => s.sid.startsWith(`p${index}:`))).length,
      sections: sections.length,
      faults,
      // permits carry fences, but the census (who is inside with whom) is what judges a shared key
      staleRefused: shared ? undefined : report.fenced.staleRefused,
      overlaps: shared ? census.crowds.length : report.overlaps.length,
      lostSignalled: sections.filter((s) => s.lost && s.lost.reason !== 'killed').length,
      violations: outcome.violations.length,
      seconds: Math.round(outcome.elapsedMs / 100) / 10,
      notes,
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.children.map((child) => child.kill('SIGKILL')));
    await this.data.quit();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private judge(results: WorkerResult[], report: InvariantReport, elapsedMs: number, leaked: number): string[] {
    const { options } = this;
    const violations: string[] = [];
    const { counter, fenced, overlaps } = report;
    if ((options.unfencedMustHold ?? true) && counter.lostUpdates !== 0) {
      violations.push(`unfenced counter is ${counter.value} after ${counter.writes} writes`);
    }
    if (fenced.lostUpdates !== 0) violations.push(`fenced value is ${fenced.value} after ${fenced.accepted} writes`);
    if (fenced.duplicateFences !== 0) violations.push(`${fenced.duplicateFences} fences were granted twice`);
    for (const overlap of overlaps) {
      if (!options.leasesCanBeLost) violations.push(`${overlap.older} and ${overlap.newer} were inside at once`);
      else if (!overlap.detected) {
        const other = overlap.stale === overlap.older ? overlap.newer : overlap.older;
        violations.push(`${overlap.stale} had the lower fence while ${other} was inside, and was never told`);
      }
    }
    for (const result of results) {
      for (const text of [...result.unhandled, ...result.unexpected]) violations.push(`${result.id}: ${text}`);
      if (result.timedOut)
        violations.push(`${result.id} was still busy at its deadline (${result.completed} sections)`);
    }
    if (leaked > 0) violations.push(`${leaked} lease tokens appeared in the workers' logs`);
    if (elapsedMs > options.boundMs)
      violations.push(`the run took ${Math.round(elapsedMs)} ms, over ${options.boundMs}`);
    // no call may hang past what its wait and the command timeouts allow (a wait, a retry, a release)
    const { wait, commandTimeout } = options.worker;
    const callBound = wait + 3 * commandTimeout + 1000;
    for (const r of results) {
      if (r.maxAcquireMs > callBound)
        violations.push(`${r.id} waited ${r.maxAcquireMs} ms to enter, over ${callBound}`);
      if (r.maxFailedMs > callBound) violations.push(`${r.id} took ${r.maxFailedMs} ms to fail, over ${callBound}`);
      if (r.maxReleaseMs > 2 * commandTimeout + 1000) violations.push(`${r.id} took ${r.maxReleaseMs} ms to release`);
    }
    return violations;
  }

  /**
   * Judges each crowd the census saw that the key's shape refuses (more permits than places, a writer or a
   * mutex beside anyone): a violation unless leases can be lost and the holders never told of it could share.
   */
  private judgeCrowds(census: CensusReport): string[] {
    const told = new Set(census.sections.filter((s) => s.lost).map((s) => s.sid));
    const limit = this.options.worker.permits?.limit ?? 0;
    const violations: string[] = [];
    for (const { members } of census.crowds) {
      const crowd = members.map((m) => `${m.sid} (${m.kind})`).join(', ');
      const untold = members.filter((m) => !told.has(m.sid));
      if (!this.options.leasesCanBeLost) violations.push(`${crowd} were inside at once`);
      else if (
        !mayShare(
          untold.map((m) => m.kind),
          limit,
        )
      ) {
        violations.push(`${crowd} were inside at once, and ${untold.map((m) => m.sid).join(', ')} were never told`);
      }
    }
    return violations;
  }

  /** Counts tokens the workers used that show up anywhere in what they printed. */
  private leakedTokens(): { leaked: number; chars: number } {
    const tokens = new Set(readFileSync(this.tokensFile, 'utf8').split('\n').filter(Boolean));
    const logs = this.children.map((child) => child.output() + child.errorOutput()).join('\n');
    const leaked = [...tokens].filter((token) => logs.includes(token)).length;
    return { leaked, chars: logs.length };
  }
}
