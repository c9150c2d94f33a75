import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** How to stop a child politely, and whether it must outlive the others (Redis outlives the instances). */
export interface StopPolicy {
  /** @default sends SIGTERM */
  readonly stop?: (child: ChildProcess) => void;
  /** @default false */
  readonly last?: boolean;
}

/**
 * Every process the demo starts, each in its own process group: Ctrl-C reaches the demo alone, which
 * then stops them in order (instances first, so they release their locks while Redis still runs).
 */
export class ChildProcesses {
  private readonly running = new Map<ChildProcess, StopPolicy>();
  /** Every pid ever started, for the report (a test checks they are all gone). */
  readonly pids: number[] = [];

  spawn(command: string, args: readonly string[], options: SpawnOptions, policy: StopPolicy = {}): ChildProcess {
    const child = spawn(command, args, { ...options, detached: true });
    if (child.pid !== undefined) this.pids.push(child.pid);
    this.running.set(child, policy);
    child.once('exit', () => this.running.delete(child));
    return child;
  }

  /** Asks `child` to stop, then kills its whole group if it has not exited after `grace` ms. */
  async stop(child: ChildProcess, grace = 5000): Promise<void> {
    const policy = this.running.get(child);
    if (!policy) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (policy.stop) policy.stop(child);
    else child.kill('SIGTERM');
    const timer = setTimeout(() => killGroup(child), grace);
    await exited;
    clearTimeout(timer);
  }

  /** Stops every process still running: the others first, then those marked `last`. */
  async stopAll(): Promise<void> {
    const all = [...this.running];
    await Promise.all(all.filter(([, policy]) => !policy.last).map(([child]) => this.stop(child)));
    await Promise.all(all.filter(([, policy]) => policy.last).map(([child]) => this.stop(child)));
  }

  /** Kills every group at once, synchronously: for a demo that is exiting anyway. */
  killAll(): void {
    for (const child of this.running.keys()) killGroup(child);
  }
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
