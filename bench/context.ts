import type { Library, Role } from './libraries.js';
import type { Table } from './report.js';
import type { CommandLog } from './support/command-log.js';
import type { BenchRedis } from './support/redis.js';

/** What every scenario gets from the run: the server, the run's lengths, its contenders, its command log. */
export interface BenchContext {
  readonly redis: BenchRedis;
  /** Measured time per scenario and contender, ms. */
  readonly durationMs: number;
  /** Unmeasured time per contender before it, ms. */
  readonly warmupMs: number;
  /** The contenders of `role`, as `--libs` narrows them. */
  contenders(role: Role): Library[];
  /** The entries of `list` that `--libs` names (all without it). */
  chosen<T extends { readonly name: string }>(list: readonly T[]): T[];
  readonly commands: CommandLog;
}

/** One scenario of the bench: its number (what `--only` and the targets name it by) and how it runs. */
export interface Scenario {
  readonly id: number;
  readonly title: string;
  run(context: BenchContext): Promise<Table>;
}
