import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ContentionOptions, Grant } from './contention.js';
import type { WorkerConfig, WorkerMessage } from './process-worker.js';
import { now } from '../support/stats.js';

const WORKER_SCRIPT = fileURLToPath(new URL('./process-worker.js', import.meta.url));

/**
 * Grants per worker, the library-level retries of all workers and the CPU their measured loops used, all after
 * the warm-up.
 */
export interface ProcessRun {
  readonly grants: Grant[][];
  /** The longest wait among the warm-up's grants (processes starting together, opening their connections), ms. */
  readonly startupWaitMax: number;
  readonly retries: number;
  /** User + system CPU of every worker over its contention loop, summed, ms. */
  readonly clientCpuMs: number;
}

/**
 * Scenarios 5 and 6: `workers` forked processes contend for one key, each with its own session. In handoff
 * mode the parent plays the board over IPC (a releaser parks until another worker has taken the key). The
 * workers contend from the start, but the first `warmupMs` are not measured: grants acquired in them are left
 * out (their longest wait is kept apart), as are the workers' CPU and retries, and `beforeMeasure` runs when
 * the warm-up ends, so that command counts leave out connection setup and the first subscriptions.
 */
export async function contendInProcesses(
  library: string,
  url: string,
  workers: number,
  options: ContentionOptions,
  durationMs: number,
  warmupMs: number,
  beforeMeasure: () => Promise<void>,
): Promise<ProcessRun> {
  const children: ChildProcess[] = [];
  const parked = new Set<number>();
  let lastHolder = -1;
  let ready = 0;
  let stopped = false;
  let signalReady!: () => void;
  let failReady!: (error: Error) => void;
  const allReady = new Promise<void>((resolve, reject) => ((signalReady = resolve), (failReady = reject)));
  type WorkerResult = { grants: Grant[]; startupWaitMax: number; retries: number; clientCpuMs: number };
  const results: Array<Promise<WorkerResult>> = [];

  for (let worker = 0; worker < workers; worker++) {
    const config: WorkerConfig = { library, url, worker, options };
    const child = fork(WORKER_SCRIPT, [JSON.stringify(config)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
    const send = (message: WorkerMessage): void => void child.send(message);
    results.push(
      new Promise((resolve, reject) => {
        child.on('message', (message: WorkerMessage) => {
          if (message.type === 'ready' && ++ready === workers) signalReady();
          else if (message.type === 'acquired') {
            lastHolder = worker;
            for (const other of parked) {
              if (other === worker) continue;
              parked.delete(other);
              children[other].send({ type: 'unpark' } satisfies WorkerMessage);
            }
          } else if (message.type === 'park') {
            if (lastHolder !== worker || stopped) send({ type: 'unpark' });
            else parked.add(worker);
          } else if (message.type === 'done') {
            const { grants, startupWaitMax, retries, clientCpuMs } = message;
            resolve({ grants: grants as Grant[], startupWaitMax, retries, clientCpuMs });
          }
        });
        child.once('exit', (code) => {
          const error = new Error(`bench worker ${worker} (${library}) exited with ${code}`);
          failReady(error);
          reject(error);
        });
      }),
    );
  }
  try {
    await allReady;
    const measureFrom = now() + warmupMs;
    const end = measureFrom + durationMs;
    for (const child of children) child.send({ type: 'go', measureFrom, end } satisfies WorkerMessage);
    let measuring: Promise<void> | undefined;
    const warmedUp = setTimeout(() => {
      measuring = beforeMeasure();
    }, warmupMs);
    const stopper = setTimeout(
      () => {
        stopped = true;
        for (const worker of parked) children[worker].send({ type: 'unpark' } satisfies WorkerMessage);
        parked.clear();
      },
      warmupMs + durationMs + 1,
    );
    const done = await Promise.all(results);
    clearTimeout(warmedUp);
    clearTimeout(stopper);
    await measuring;
    return {
      grants: done.map((result) => result.grants),
      startupWaitMax: Math.max(0, ...done.map((result) => result.startupWaitMax)),
      retries: done.reduce((sum, r) => sum + r.retries, 0),
      clientCpuMs: done.reduce((sum, r) => sum + r.clientCpuMs, 0),
    };
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
  }
}
