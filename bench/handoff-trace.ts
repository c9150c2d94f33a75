// Where the time of a cross-process hand-off goes (see docs/benchmarks.md, the Nest path): N forked workers (8)
// take one key in turns as scenario 6 does, each noting when it writes to a socket and when a socket's data
// arrives, on the machine's monotonic clock. For each hand-off from one worker to another it prints the split:
// the releaser's release call to its write, its write to the release's reply, its write to the data that woke
// the next holder (the release notice: a waiter told that it holds the key sends nothing after it), and that
// data to the next holder's acquire resolving. LIB (nestjs-lock LockService), N, SECONDS (6; the first second is
// warm-up), CS_MS (1), PROF (a directory for the workers' CPU profiles).
//   npx tsc -p tsconfig.bench.json && node bench/.tmp/bench/handoff-trace.js
import { fork } from 'node:child_process';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { libraryNamed } from './libraries.js';
import { SERVICE } from './contenders/nestjs-lock-service.js';
import { BenchRedis } from './support/redis.js';
import { now, percentile } from './support/stats.js';

const WARM_UP_MS = 1000;

/** One critical section, with the time the releaser's `release()` resolved. */
interface TracedGrant {
  readonly worker: number;
  readonly acquiredAt: number;
  readonly releaseAt: number;
  readonly releasedAt: number;
}

/** What a worker sends back: its grants, and when it wrote to and read from its sockets. */
interface WorkerTrace {
  readonly grants: TracedGrant[];
  readonly writes: number[];
  readonly reads: number[];
}

/** Notes every socket write and every arrival of data in this process. */
function traceSockets(writes: number[], reads: number[]): void {
  const write = net.Socket.prototype.write;
  net.Socket.prototype.write = function (this: net.Socket, ...args: unknown[]) {
    writes.push(now());
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof write;
  const emit = net.Socket.prototype.emit;
  net.Socket.prototype.emit = function (this: net.Socket, event: string | symbol, ...args: unknown[]) {
    if (event === 'data') reads.push(now());
    return (emit as (...a: unknown[]) => boolean).apply(this, [event, ...args]);
  } as typeof emit;
}

/** What the parent tells a worker when it forks it. */
interface WorkerConfig {
  readonly url: string;
  readonly index: number;
  readonly csMs: number;
  readonly library: string;
}

async function worker({ url, index, csMs, library }: WorkerConfig): Promise<void> {
  const trace: WorkerTrace = { grants: [], writes: [], reads: [] };
  traceSockets(trace.writes, trace.reads);
  const session = await libraryNamed(library).open(url);
  // told to go, with the run's end, once every worker is ready
  const end = await new Promise<number>((resolve) => {
    process.once('message', (go: { end: number }) => resolve(go.end));
    process.send?.('ready');
  });
  while (now() < end) {
    const held = await session.acquire('traced');
    const acquiredAt = now();
    await sleep(csMs);
    const releaseAt = now();
    await held.release();
    trace.grants.push({ worker: index, acquiredAt, releaseAt, releasedAt: now() });
  }
  await new Promise((resolve) => process.send?.(trace, resolve));
  await session.close();
  process.exit(0);
}

/** The first of the sorted `times` at or after `t`, the last at or before it. */
const firstFrom = (times: readonly number[], t: number): number => times.find((x) => x >= t) ?? NaN;
function lastUntil(times: readonly number[], t: number): number {
  let last = NaN;
  for (const x of times) {
    if (x > t) break;
    last = x;
  }
  return last;
}

async function main(): Promise<void> {
  const workers = Number(process.env.N ?? 8);
  const seconds = Number(process.env.SECONDS ?? 6);
  const csMs = Number(process.env.CS_MS ?? 1);
  const library = process.env.LIB ?? SERVICE;
  const redis = await BenchRedis.start();
  try {
    // PROF=<dir>: a CPU profile of each worker (sampled every 50 µs)
    const profile = process.env.PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROF}`, '--cpu-prof-interval=50']
      : [];
    const children = Array.from({ length: workers }, () =>
      fork(fileURLToPath(import.meta.url), { stdio: 'inherit', execArgv: profile }),
    );
    const readies = children.map((child) => new Promise((resolve) => child.once('message', resolve)));
    children.forEach((child, index) => child.send({ url: redis.url, index, csMs, library } satisfies WorkerConfig));
    await Promise.all(readies);
    const start = now();
    const traces = children.map(
      (child) => new Promise<WorkerTrace>((resolve) => child.once('message', (m) => resolve(m as WorkerTrace))),
    );
    children.forEach((child) => child.send({ end: start + seconds * 1000 }));
    await sleep(WARM_UP_MS);
    await redis.admin.config('RESETSTAT');
    const done = await Promise.all(traces);
    const scripts = /cmdstat_evalsha:calls=(\d+),usec=\d+,usec_per_call=([\d.]+)/.exec(
      await redis.admin.info('commandstats'),
    );
    report(done, start + WARM_UP_MS, scripts ? `${scripts[2]} µs per EVALSHA (${scripts[1]} calls)` : 'no EVALSHA');
  } finally {
    await redis.stop();
  }
}

function report(traces: readonly WorkerTrace[], measureFrom: number, scripts: string): void {
  const grants = traces
    .flatMap((trace) => trace.grants)
    .filter((grant) => grant.acquiredAt >= measureFrom)
    .sort((a, b) => a.acquiredAt - b.acquiredAt);
  const parts: Record<string, number[]> = {
    'gap (release call → next holder)': [],
    'release call → its write': [],
    'its write → its reply': [],
    'its write → data at the next holder': [],
    'that data → acquire resolved': [],
  };
  const [gap, toWrite, toReply, toNotice, inProcess] = Object.values(parts);
  for (let i = 1; i < grants.length; i++) {
    const [before, next] = [grants[i - 1], grants[i]];
    if (before.worker === next.worker) continue;
    const releaser = traces[before.worker];
    const write = firstFrom(releaser.writes, before.releaseAt);
    const notice = lastUntil(traces[next.worker].reads, next.acquiredAt);
    gap.push(next.acquiredAt - before.releaseAt);
    toWrite.push(write - before.releaseAt);
    toReply.push(firstFrom(releaser.reads, write) - write);
    toNotice.push(notice - write);
    inProcess.push(next.acquiredAt - notice);
  }
  const seconds = (grants.at(-1)!.acquiredAt - grants[0].acquiredAt) / 1000;
  console.log(`${traces.length} workers, ${(grants.length / seconds).toFixed(0)} grants/s, ${gap.length} hand-offs`);
  console.log(`server: ${scripts}`);
  for (const [name, values] of Object.entries(parts)) {
    const ms = (p: number): string => percentile(values.filter(Number.isFinite), p).toFixed(3);
    console.log(`${name.padEnd(38)} p10 ${ms(10)}  p50 ${ms(50)}  p90 ${ms(90)} ms`);
  }
}

if (process.send) {
  process.once('message', (config: WorkerConfig) => void worker(config));
} else {
  await main();
}
