import { cpuMsSince } from './cpu.js';
import { commandDelta, type BenchRedis, type CommandDelta } from './redis.js';

/** What a measured stretch cost: this process's CPU, redis-server's CPU, the commands the server ran. */
export interface Usage {
  readonly clientCpuMs: number;
  readonly serverCpuMs: number;
  readonly commands: CommandDelta;
}

/** Starts measuring; the returned function ends the stretch and tells what it cost. */
export async function meter(redis: BenchRedis): Promise<() => Promise<Usage>> {
  const commandsBefore = await redis.commandCounts();
  const serverBefore = await redis.cpuSeconds();
  const clientBefore = process.cpuUsage();
  return async () => {
    const clientCpuMs = cpuMsSince(clientBefore);
    const serverCpuMs = ((await redis.cpuSeconds()) - serverBefore) * 1000;
    return { clientCpuMs, serverCpuMs, commands: commandDelta(commandsBefore, await redis.commandCounts()) };
  };
}
