import { libraryNamed } from '../libraries.js';
import { contend, type Board, type ContentionOptions } from './contention.js';
import { now } from '../support/stats.js';

/** What the parent tells a forked worker (scenarios 5 and 6). */
export interface WorkerConfig {
  readonly library: string;
  readonly url: string;
  readonly worker: number;
  readonly options: ContentionOptions;
}

/** Messages between the parent and a forked worker. */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'go'; measureFrom: number; end: number }
  | { type: 'acquired' }
  | { type: 'park' }
  | { type: 'unpark' }
  | { type: 'done'; grants: unknown[]; startupWaitMax: number; retries: number; clientCpuMs: number };

/** The handoff rule across processes: the parent knows the last holder and unparks releasers. */
class RemoteBoard implements Board {
  private resume?: () => void;

  constructor(private readonly send: (message: WorkerMessage) => void) {}

  acquired(): void {
    this.send({ type: 'acquired' });
  }

  letOthersTake(): Promise<void> {
    return new Promise((resolve) => {
      this.resume = resolve;
      this.send({ type: 'park' });
    });
  }

  unpark(): void {
    this.resume?.();
    this.resume = undefined;
  }
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]) as WorkerConfig;
  const send = (message: WorkerMessage): void => void process.send?.(message);
  const session = await libraryNamed(config.library).open(config.url);
  const board = new RemoteBoard(send);
  const { measureFrom, end } = await new Promise<{ measureFrom: number; end: number }>((resolve) => {
    process.on('message', (message: WorkerMessage) => {
      if (message.type === 'go') resolve(message);
      else if (message.type === 'unpark') board.unpark();
    });
    send({ type: 'ready' });
  });
  // the warm-up's CPU and retries are not counted: sampled again once it is over
  let cpuBefore = process.cpuUsage();
  let retriesBefore = session.retries;
  const warmedUp = setTimeout(
    () => {
      cpuBefore = process.cpuUsage();
      retriesBefore = session.retries;
    },
    Math.max(0, measureFrom - now()),
  );
  // greedy workers need no board: nobody steps aside, and an IPC message per grant would only add noise
  const all = await contend(session, config.worker, config.options, end, config.options.handoff ? board : undefined);
  clearTimeout(warmedUp);
  const cpu = process.cpuUsage(cpuBefore);
  const startup = all.filter((grant) => grant.acquiredAt < measureFrom);
  const done: WorkerMessage = {
    type: 'done',
    grants: all.filter((grant) => grant.acquiredAt >= measureFrom),
    startupWaitMax: Math.max(0, ...startup.map((grant) => grant.acquiredAt - grant.wantAt)),
    retries: session.retries - retriesBefore,
    clientCpuMs: (cpu.user + cpu.system) / 1000,
  };
  await new Promise((resolve) => process.send?.(done, resolve));
  await session.close();
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
