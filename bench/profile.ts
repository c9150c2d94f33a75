// A small driver of the Nest path for `node --cpu-prof` (see docs/benchmarks.md): the bench's scenarios mix
// contenders and slices, a profile wants one path alone.
//   WHAT=service: LockService.acquire(key, { ttl, wait, autoRenew: false }) + release(), LOOPS loops on own keys
//   WHAT=http:    POST undecorated, with the floor's lock or LockService by hand, with @WithLock, in turns
import { Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import { openNestLocks } from './contenders/nest-application.js';
import { sequentialRequests, startApp, type Endpoint, type Platform } from './scenarios/http.js';
import { BenchRedis } from './support/redis.js';

const seconds = Number(process.env.SECONDS ?? 4);

/** CPU of this process per unit of work over `run`, in µs. */
async function perUnit(run: () => Promise<number>): Promise<string> {
  const cpu = process.cpuUsage();
  const units = await run();
  const used = process.cpuUsage(cpu);
  return `${units} done, ${((used.user + used.system) / units).toFixed(1)} µs CPU each`;
}

async function service(url: string): Promise<void> {
  const { locks, close } = await openNestLocks(url);
  const loops = Number(process.env.LOOPS ?? 64);
  const cycles = async (ms: number): Promise<number> => {
    const end = performance.now() + ms;
    let count = 0;
    await Promise.all(
      Array.from({ length: loops }, async (_, loop) => {
        while (performance.now() < end) {
          const lock = await locks.acquire(`profile:${loop}`, { ttl: 30_000, wait: 10_000, autoRenew: false });
          await lock.release();
          count++;
        }
      }),
    );
    return count;
  };
  await cycles(1000);
  console.log(`LockService, ${loops} loops: ${await perUnit(() => cycles(seconds * 1000))}`);
  await close();
}

async function http(url: string): Promise<void> {
  const app = await startApp((process.env.PLATFORM ?? 'fastify') as Platform, url);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  // ENDPOINT=floor (or plain, locked) runs one alone, for a profile of it to set against another's
  const only = process.env.ENDPOINT as Endpoint | undefined;
  const turns: Endpoint[] = only
    ? [only, only]
    : ['plain', 'floor', 'service', 'locked', 'plain', 'floor', 'service', 'locked'];
  for (const endpoint of turns) {
    let p50 = 0;
    const line = await perUnit(async () => {
      const latencies = (await sequentialRequests(app, endpoint, (seconds * 1000) / 4, agent)).sort((a, b) => a - b);
      p50 = latencies[latencies.length >> 1];
      return latencies.length;
    });
    console.log(`${app.platform} ${endpoint}: p50 ${p50.toFixed(3)} ms, ${line}`);
  }
  agent.destroy();
  await app.close();
}

const redis = await BenchRedis.start();
try {
  await (process.env.WHAT === 'http' ? http(redis.url) : service(redis.url));
} finally {
  await redis.stop();
}
