import type { BenchContext } from '../context.js';
import type { Library } from '../libraries.js';
import { addCommands, noCommands, type CommandDelta } from './redis.js';
import { meter } from './usage.js';

/** What one contender did over all its slices of an interleaved run. */
export interface SliceTotals<R> {
  /** What each measured slice returned, in order. */
  readonly results: R[];
  /** Acquisitions (cycles or grants) of every measured slice. */
  count: number;
  clientCpuMs: number;
  serverCpuMs: number;
  readonly commands: CommandDelta;
}

/** How an interleaved run opens, runs and closes what one contender needs. */
export interface Slicing<S, R, L = Library> {
  readonly sliceMs: number;
  open(library: L): Promise<S>;
  close(opened: S): Promise<void>;
  run(opened: S, library: L, ms: number): Promise<R>;
  /** Acquisitions in one slice's result. */
  count(result: R): number;
}

/**
 * Runs every contender in turn, `sliceMs` at a time, until each had the run's duration: load from anything
 * else on the machine then falls on all of them alike. Client CPU is this process's, server CPU redis-server's.
 */
export async function interleaved<S, R, L = Library>(
  context: BenchContext,
  libraries: readonly L[],
  slicing: Slicing<S, R, L>,
): Promise<Map<L, SliceTotals<R>>> {
  await context.redis.reset();
  const opened = new Map<L, S>();
  const totals = new Map<L, SliceTotals<R>>();
  try {
    for (const library of libraries) {
      opened.set(library, await slicing.open(library));
      totals.set(library, { results: [], count: 0, clientCpuMs: 0, serverCpuMs: 0, commands: noCommands() });
    }
    for (const [library, sessions] of opened) await slicing.run(sessions, library, context.warmupMs);
    for (let round = 0; round < Math.max(1, Math.round(context.durationMs / slicing.sliceMs)); round++) {
      for (const [library, sessions] of opened) {
        const total = totals.get(library) as SliceTotals<R>;
        const stop = await meter(context.redis);
        const result = await slicing.run(sessions, library, slicing.sliceMs);
        const usage = await stop();
        total.results.push(result);
        total.count += slicing.count(result);
        total.clientCpuMs += usage.clientCpuMs;
        total.serverCpuMs += usage.serverCpuMs;
        addCommands(total.commands, usage.commands);
      }
    }
  } finally {
    await Promise.all([...opened.values()].map((sessions) => slicing.close(sessions)));
  }
  return totals;
}
