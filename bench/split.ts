// Where the client CPU of an uncontended cycle goes (see docs/benchmarks.md, the Nest path): the floor, the store's
// own commands sent by hand, the engine, the module's client options and LockService, in one process taking
// turns, so that other load on the machine falls on all alike. LOOPS (64; 1 is sequential, and also times each
// cycle for its p50), ROUNDS, MS per turn.
//   npx tsc -p tsconfig.bench.json && node bench/.tmp/bench/split.js
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis, type RedisOptions } from 'ioredis';
import { LockManager, RedisLockStore } from '../lib/index.js';
import { encodeHolder } from '../lib/core/lock-holder.js';
import { coalesceWrites } from '../lib/stores/redis/coalesced-writes.js';
import { takeOverCommandTimeout } from '../lib/stores/redis/command-deadlines.js';
import { resourceKeys } from '../lib/stores/redis/resource-keys.js';
import { RELEASE } from '../lib/stores/redis/scripts/index.js';
import { newToken } from '../lib/utils/token.js';
import { openNestLocks } from './contenders/nest-application.js';
import { TTL } from './contenders/contender.js';
import { BenchRedis } from './support/redis.js';

const FLOOR_RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
/** The options of a client LockModule creates (see redis.descriptor.ts) that cost something per command. */
const MODULE_CLIENT: RedisOptions = { commandTimeout: 2000, maxRetriesPerRequest: 1 };
/** The same options with ioredis' own timer per command, as the module's client had before command-deadlines.ts. */
const IOREDIS_TIMER: RedisOptions = { ...MODULE_CLIENT };

/**
 * A client as LockModule creates it: its options, one socket write per tick (coalesced-writes.ts) and one
 * deadline line instead of a timer per command (command-deadlines.ts).
 */
function connect(url: string, options: RedisOptions): Redis {
  const client = new Redis(url, options);
  if (options === MODULE_CLIENT) takeOverCommandTimeout(client);
  if (options === MODULE_CLIENT || options === IOREDIS_TIMER) coalesceWrites(client);
  return client;
}
const OPTIONS = { ttl: TTL, wait: 10_000, autoRenew: false };

type Cycle = (key: string) => Promise<void>;

/** What each variant opened, closed at the end. */
const closers: Array<() => Promise<unknown>> = [];

async function floor(url: string): Promise<Cycle> {
  const client = new Redis(url);
  closers.push(() => client.quit());
  const sha = (await client.script('LOAD', FLOOR_RELEASE)) as string;
  return async (key) => {
    const token = randomUUID();
    if ((await client.set(key, token, 'PX', TTL, 'NX')) !== 'OK') throw new Error(`${key} is held`);
    await client.evalsha(sha, 1, key, token);
  };
}

/** The commands RedisLockStore sends for an uncontended cycle, without the engine around them. */
async function storeCommands(url: string, options: RedisOptions): Promise<Cycle> {
  const client = connect(url, options);
  closers.push(() => client.quit());
  await client.script('LOAD', RELEASE.lua);
  return async (key) => {
    const token = newToken();
    const keys = resourceKeys('lock:', key);
    const value = `${token}\n${encodeHolder(undefined)}`;
    if ((await client.set(keys.lock, value, 'PX', TTL, 'NX')) !== 'OK') throw new Error(`${key} is held`);
    const { lock, fence, line, channel } = keys;
    await client.evalsha(RELEASE.sha, 3, lock, fence, line, token, channel, 'PUBLISH', 'owner', 5, 1e9);
  };
}

function engine(url: string, options: RedisOptions): Cycle {
  const store = new RedisLockStore({ client: connect(url, options), ownsClient: true });
  const manager = new LockManager({ store });
  closers.push(() => manager.close());
  return async (key) => void (await (await manager.acquire(key, OPTIONS)).release());
}

const redis = await BenchRedis.start();
const { locks, close } = await openNestLocks(redis.url);
closers.push(close);
const cycles: Record<string, Cycle> = {
  floor: await floor(redis.url),
  'store commands': await storeCommands(redis.url, {}),
  'store commands, module client': await storeCommands(redis.url, MODULE_CLIENT),
  'store commands, ioredis timer': await storeCommands(redis.url, IOREDIS_TIMER),
  LockManager: engine(redis.url, {}),
  'LockManager, module client': engine(redis.url, MODULE_CLIENT),
  'LockManager, ioredis timer': engine(redis.url, IOREDIS_TIMER),
  LockService: async (key) => void (await (await locks.acquire(key, OPTIONS)).release()),
};
const loops = Number(process.env.LOOPS ?? 64);
const rounds = Number(process.env.ROUNDS ?? 10);
const ms = Number(process.env.MS ?? 400);
const cpuPerCycle = new Map<string, number[]>();
// sequential turns also time each cycle: the uncontended p50 of scenario 1, with the same load on every variant
const latencies = new Map<string, number[]>(Object.keys(cycles).map((name) => [name, []]));
for (let round = 0; round <= rounds; round++) {
  for (const [name, cycle] of Object.entries(cycles)) {
    const cpu = process.cpuUsage();
    const end = performance.now() + ms;
    let count = 0;
    const timed = loops === 1 && round > 0 ? latencies.get(name) : undefined;
    await Promise.all(
      Array.from({ length: loops }, async (_, loop) => {
        while (performance.now() < end) {
          const start = performance.now();
          await cycle(`split:${name}:${loop}`);
          timed?.push(performance.now() - start);
          count++;
        }
      }),
    );
    const used = process.cpuUsage(cpu);
    // the first round warms up
    if (round > 0) cpuPerCycle.set(name, [...(cpuPerCycle.get(name) ?? []), (used.user + used.system) / count]);
  }
}
const median = (values: number[]): number => values.sort((a, b) => a - b)[values.length >> 1];
console.log(`client CPU per cycle, ${loops} loops, median of ${rounds} turns of ${ms} ms:`);
for (const [name, values] of cpuPerCycle) console.log(`  ${name.padEnd(30)} ${median(values).toFixed(1)} µs`);
if (loops === 1) {
  const floorP50 = median(latencies.get('floor')!);
  console.log('cycle p50, all turns but the first:');
  for (const [name, values] of latencies) {
    const p50 = median(values);
    console.log(`  ${name.padEnd(30)} ${(p50 * 1000).toFixed(1)} µs  ${(p50 / floorP50).toFixed(3)}× floor`);
  }
}
for (const closeIt of closers) await closeIt();
await redis.stop();
