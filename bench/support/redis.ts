import { Redis } from 'ioredis';
import { startRedisServer, type RedisServerHandle } from '../../test/support/redis-server.js';

/** Calls per command name, as `INFO commandstats` counts them (commands run inside Lua scripts included). */
export type CommandCounts = Record<string, number>;

/** Commands the bench itself sends (or that only connection setup sends), left out of every count. */
const OWN_COMMANDS = new Set([
  'info',
  'config|resetstat',
  'config|get',
  'client|setname',
  'client|info',
  'hello',
  'quit',
  'flushall',
]);

/** The redis-server every scenario runs against, with an admin connection that reads its counters. */
export class BenchRedis {
  private constructor(
    private readonly server: RedisServerHandle,
    readonly admin: Redis,
    readonly version: string,
  ) {}

  static async start(): Promise<BenchRedis> {
    // no persistence, no debug hooks beyond the test harness's: an idle server but for the bench
    const server = await startRedisServer();
    const admin = new Redis(server.url);
    const info = await admin.info('server');
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
    return new BenchRedis(server, admin, version);
  }

  get url(): string {
    return this.server.url;
  }

  /** A new connection as a library's worker would open it. */
  client(): Redis {
    return new Redis(this.url);
  }

  async commandCounts(): Promise<CommandCounts> {
    const text = await this.admin.info('commandstats');
    const counts: CommandCounts = {};
    for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      if (!OWN_COMMANDS.has(match[1])) counts[match[1]] = Number(match[2]);
    }
    return counts;
  }

  /** CPU seconds (user + system) the server has used so far. */
  async cpuSeconds(): Promise<number> {
    const text = await this.admin.info('cpu');
    const read = (field: string): number => Number(new RegExp(`${field}:([\\d.]+)`).exec(text)?.[1] ?? 0);
    return read('used_cpu_user') + read('used_cpu_sys');
  }

  /** Empties the keyspace and script cache between runs, so no library sees another's leftovers. */
  async reset(): Promise<void> {
    await this.admin.flushall();
  }

  async stop(): Promise<void> {
    await this.admin.quit();
    await this.server.stop();
  }
}

/** What ran on the server between two snapshots, by command, and in total. */
export interface CommandDelta {
  total: number;
  byCommand: CommandCounts;
}

/** An empty {@link CommandDelta}, to add slices to. */
export const noCommands = (): CommandDelta => ({ total: 0, byCommand: {} });

/** Adds `delta` into `sum`. */
export function addCommands(sum: CommandDelta, delta: CommandDelta): void {
  sum.total += delta.total;
  for (const [name, calls] of Object.entries(delta.byCommand)) sum.byCommand[name] = (sum.byCommand[name] ?? 0) + calls;
}

/** What ran on the server between two snapshots. */
export function commandDelta(before: CommandCounts, after: CommandCounts): CommandDelta {
  const byCommand: CommandCounts = {};
  let total = 0;
  for (const [name, calls] of Object.entries(after)) {
    const delta = calls - (before[name] ?? 0);
    if (delta > 0) {
      byCommand[name] = delta;
      total += delta;
    }
  }
  return { total, byCommand };
}

/** `evalsha 2.0, get 2.0, ...` per acquisition, largest first. */
export function describePer(byCommand: CommandCounts, divisor: number): string {
  return Object.entries(byCommand)
    .sort((a, b) => b[1] - a[1])
    .map(([name, calls]) => `${name} ${(calls / divisor).toFixed(2)}`)
    .join(', ');
}
