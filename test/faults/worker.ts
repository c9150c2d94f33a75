// One process of a fault scenario: a Nest application that takes one lock over and over and, inside it,
// does the work the invariant checkers watch. Started by scenario.ts; speaks to it by lines on stdin/stdout.
import 'reflect-metadata';
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { GlideClient } from '@valkey/valkey-glide';
import { Redis as Valkey } from 'iovalkey';
import { createClient } from 'redis';
import type { AcquireRequest, AcquireResult } from '../../lib/interfaces/lease.interface.js';
import {
  EtcdLockStore,
  isLockError,
  PostgresLockStore,
  LockModule,
  LockService,
  RedisLockStore,
  type Lock,
  type LockLostError,
} from '../../lib/index.js';
import type { LockStore } from '../../lib/store.js';
import { blockEventLoop } from '../support/faults.js';
import { FencedResource, HolderCensus, LostUpdateCounter, type HolderKind } from '../support/invariants.js';

/** What a worker does; given as JSON in `WORKER_CONFIG`. */
export interface WorkerConfig {
  /** Process name; section ids are `<id>:<n>`. */
  readonly id: string;
  /** The Redis that holds the locks (maybe through a fault proxy). */
  readonly lockUrl: string;
  /** Keep the locks in etcd instead, on these members (`commandTimeout` is then each call's deadline). */
  readonly etcdHosts?: readonly string[];
  /** Keep the locks in PostgreSQL instead, at this URL (maybe a pooler's). */
  readonly postgresUrl?: string;
  /** The Redis of the checkers (never faulted). */
  readonly dataUrl: string;
  readonly checkerPrefix: string;
  readonly keyPrefix: string;
  /** The one lock key every worker of the scenario contends for. */
  readonly resource: string;
  /** Stop after this many completed critical sections (or on `stop`). */
  readonly sections: number;
  /** Stop trying after this many ms from `go`, whatever else happens. */
  readonly deadlineMs: number;
  /** Time spent inside a section between the reads and the writes. */
  readonly holdMs: number;
  readonly ttl: number;
  readonly wait: number;
  readonly retry?: { minDelay?: number; maxDelay?: number };
  /** ioredis' `commandTimeout` (node-redis' is the store's own, 2000 ms; GLIDE's `requestTimeout` is 2000 ms). */
  readonly commandTimeout: number;
  /** The client library the Redis store runs on. @default 'ioredis' */
  readonly client?: FaultClient;
  /** ioredis `maxRetriesPerRequest`: 1 resends a command cut by a reconnect, 0 fails it. @default 1 */
  readonly maxRetriesPerRequest?: number;
  /** Run the section without taking the lock (fence 1 for all): a control that the checkers must catch. */
  readonly bypassLock?: boolean;
  /** Pause between two calls, so that the lock is often free when a call comes. @default 0 */
  readonly gapMs?: number;
  /** Print `entered <sid>` when a section starts, for the test to time its faults. */
  readonly announce?: boolean;
  /** Stay inside the section with this id (e.g. `p0:2`) until the test sends `continue`, instead of holding. */
  readonly pauseAt?: string;
  /** Block the event loop for `blockMs` inside this section number instead of holding. */
  readonly blockAtSection?: number;
  readonly blockMs?: number;
  /** Every token this process sends is appended here, so the test can look for it in the logs. */
  readonly tokensFile: string;
  /** Take permits of the key instead of its mutex; the sections are then counted by a HolderCensus. */
  readonly permits?: WorkerPermits;
  /**
   * Campaign for the leadership of `resource` instead of taking its lock: each term is one section, with the
   * term as its fence, and the worker resigns when the section ends (then rests `gapMs`).
   */
  readonly lead?: boolean;
}

/** The client libraries the Redis rows of the fault suite run on. */
export type FaultClient = 'ioredis' | 'node-redis' | 'iovalkey' | 'glide';

/** How a worker's sections share the key: a semaphore, or readers and writers, with mutex sections beside. */
export interface WorkerPermits {
  /** A semaphore of this many places; without it, a readers-writer lock. */
  readonly limit?: number;
  /** On a readers-writer lock, the share of sections that write. @default 0 */
  readonly writeShare?: number;
  /** The share of sections that take the key's mutex instead of a permit. @default 0 */
  readonly mutexShare?: number;
}

/** What a worker reports on its last line, `result <json>`. */
export interface WorkerResult {
  readonly id: string;
  /** `using()` calls made. */
  attempts: number;
  /** Critical sections that ran to their end. */
  completed: number;
  /** Failed calls by error code. */
  errors: Record<string, number>;
  /** Lost-lease signals by reason. */
  lost: Record<string, number>;
  /** Term signals that aborted because the worker resigned (its section had ended): no loss. */
  resigned: number;
  /** Longest wait from calling `using()` to entering the section. */
  maxAcquireMs: number;
  /** Longest time from leaving the section to `using()` returning (the release). */
  maxReleaseMs: number;
  /** Longest failed `using()` call. */
  maxFailedMs: number;
  /** Errors that are not lock errors: there should be none. */
  unexpected: string[];
  /** Unhandled rejections and uncaught exceptions: there should be none. */
  unhandled: string[];
  /** Stopped by its deadline rather than by finishing or being told to stop. */
  timedOut: boolean;
}

const config = JSON.parse(process.env.WORKER_CONFIG ?? '{}') as WorkerConfig;
const result: WorkerResult = {
  id: config.id,
  attempts: 0,
  completed: 0,
  errors: {},
  lost: {},
  resigned: 0,
  maxAcquireMs: 0,
  maxReleaseMs: 0,
  maxFailedMs: 0,
  unexpected: [],
  unhandled: [],
  timedOut: false,
};
const describe = (value: unknown): string =>
  value instanceof Error ? `${value.name}: ${value.message}` : inspect(value);
process.on('unhandledRejection', (reason) => result.unhandled.push(`unhandled rejection: ${describe(reason)}`));
process.on('uncaughtException', (error) => result.unhandled.push(`uncaught exception: ${describe(error)}`));

/** The Redis store, noting every token it is asked to use (its permits' too). */
class RecordingStore extends RedisLockStore {
  constructor(...args: ConstructorParameters<typeof RedisLockStore>) {
    super(...args);
    const permits = this.capabilities.permits;
    const acquire = permits.acquire.bind(permits);
    permits.acquire = (request) => {
      appendFileSync(config.tokensFile, `${request.token}\n`);
      return acquire(request);
    };
  }

  override acquire(request: AcquireRequest): Promise<AcquireResult> {
    appendFileSync(config.tokensFile, `${request.token}\n`);
    return super.acquire(request);
  }
}

/** The etcd store, noting every token it is asked to use. */
class RecordingEtcdStore extends EtcdLockStore {
  override acquire(request: AcquireRequest): Promise<AcquireResult> {
    appendFileSync(config.tokensFile, `${request.token}\n`);
    return super.acquire(request);
  }
}

/** The Postgres store, noting every token it is asked to use. */
class RecordingPostgresStore extends PostgresLockStore {
  override acquire(request: AcquireRequest): Promise<AcquireResult> {
    appendFileSync(config.tokensFile, `${request.token}\n`);
    return super.acquire(request);
  }
}

/** The lock Redis' client, of the library the scenario runs on (node-redis' given unconnected: the store connects it). */
async function connectLockClient(): Promise<Redis | ReturnType<typeof createClient> | GlideClient> {
  const options = {
    commandTimeout: config.commandTimeout,
    connectTimeout: 2000,
    maxRetriesPerRequest: config.maxRetriesPerRequest ?? 1,
  };
  switch (config.client ?? 'ioredis') {
    case 'node-redis':
      return createClient({ url: config.lockUrl, socket: { connectTimeout: 2000 } });
    case 'iovalkey':
      // the same API as ioredis, another package
      return new Valkey(config.lockUrl, options) as unknown as Redis;
    case 'glide': {
      const { hostname, port } = new URL(config.lockUrl);
      return GlideClient.createClient({ addresses: [{ host: hostname, port: Number(port) }], requestTimeout: 2000 });
    }
    default:
      return new Redis(config.lockUrl, options);
  }
}

const lockClient = config.etcdHosts || config.postgresUrl ? undefined : await connectLockClient();
// outages are the point here; they surface through the commands that fail (GLIDE emits no 'error' events)
if (lockClient && !(lockClient instanceof GlideClient)) lockClient.on('error', () => undefined);
const store: LockStore = lockClient
  ? new RecordingStore({ client: lockClient, keyPrefix: config.keyPrefix })
  : config.postgresUrl
    ? new RecordingPostgresStore({ connectionString: config.postgresUrl, keyPrefix: config.keyPrefix })
    : new RecordingEtcdStore({ hosts: config.etcdHosts, keyPrefix: config.keyPrefix, timeout: config.commandTimeout });
const data = new Redis(config.dataUrl);
const counter = new LostUpdateCounter(data, config.checkerPrefix);
const resource = new FencedResource(data, config.checkerPrefix);
const census = new HolderCensus(data, config.checkerPrefix);
const pending = new Set<Promise<unknown>>();

@Module({ imports: [LockModule.forRoot({ store, fencing: true })] })
class WorkerModule {}

const app = await NestFactory.createApplicationContext(WorkerModule, { logger: ['log', 'warn', 'error'] });
const locks = app.get(LockService);

let stopping = false;
let started: () => void;
const go = new Promise<void>((resolve) => (started = resolve));
let continued: () => void;
const resumed = new Promise<void>((resolve) => (continued = resolve));
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line === 'go') started();
  if (line === 'stop') stopping = true;
  if (line === 'continue') continued();
});
// the test process holds our stdin: when it goes away, so do we
lines.on('close', () => process.exit(0));
console.log('ready');
await go;

/** What a section uses of its lock. */
type Held = Pick<Lock, 'fence' | 'isHeld' | 'signal'>;

/** Counts the lease of `sid` as lost, where `note` records it, when its signal aborts. */
function noteLoss(lock: Held, sid: string, note: (sid: string, reason: string) => Promise<void>): void {
  lock.signal.addEventListener(
    'abort',
    () => {
      const reason = (lock.signal.reason as LockLostError).reason;
      if (reason === 'resigned') {
        result.resigned++;
        return;
      }
      result.lost[reason] = (result.lost[reason] ?? 0) + 1;
      const noted = note(sid, reason).catch((error: unknown) => result.unexpected.push(describe(error)));
      pending.add(noted);
    },
    { once: true },
  );
}

/** The time a section spends inside: a hold, a pause until `continue`, or a blocked event loop. */
async function stay(sid: string, n: number): Promise<void> {
  if (config.blockAtSection === n) blockEventLoop(config.blockMs ?? 0);
  else if (config.pauseAt === sid) await resumed;
  else await sleep(config.holdMs);
}

async function section(lock: Held, sid: string, n: number): Promise<void> {
  const fence = lock.fence!;
  noteLoss(lock, sid, (id, reason) => resource.lost(id, reason));
  await resource.enter(sid, fence);
  if (config.announce) console.log(`entered ${sid}`);
  const value = await counter.read();
  const fencedValue = await resource.read(fence);
  await stay(sid, n);
  // the unfenced write is only as safe as this check: fine while leases hold, not when Redis forgets them
  const unfenced = lock.isHeld ? 'written' : 'skipped';
  if (unfenced === 'written') await counter.write(value + 1);
  // the fenced write is sent whatever the lease says: the resource decides
  let fenced: 'accepted' | 'refused-read' | 'refused-write' = 'refused-read';
  if (fencedValue !== undefined) fenced = (await resource.write(fence, fencedValue + 1)) ? 'accepted' : 'refused-write';
  await resource.exit(sid, { exitedAt: Date.now(), unfenced, fenced, heldAtExit: lock.isHeld });
}

/** A section of a key shared by permits: the census counts who is inside with it. */
async function sharedSection(lock: Held, sid: string, n: number, kind: HolderKind): Promise<void> {
  noteLoss(lock, sid, (id, reason) => census.lost(id, reason));
  await census.enter(sid, kind);
  if (config.announce) console.log(`entered ${sid}`);
  await stay(sid, n);
  await census.exit(sid, lock.isHeld);
}

/** The kind of this worker's next section, drawn by its `permits` shares. */
function drawKind(permits: WorkerPermits): HolderKind {
  if (Math.random() < (permits.mutexShare ?? 0)) return 'mutex';
  if (permits.limit !== undefined) return 'permit';
  return Math.random() < (permits.writeShare ?? 0) ? 'write' : 'read';
}

const shapeOf = (kind: HolderKind) =>
  kind === 'permit' ? { limit: config.permits!.limit } : kind === 'mutex' ? {} : { mode: kind };

/** Leads terms of the resource's leadership, one section each, until done, stopped or out of time. */
async function leadTerms(): Promise<void> {
  let n = 0;
  const handle = locks.lead(
    config.resource,
    async (leadership) => {
      const sid = `${config.id}:${++n}`;
      result.attempts++;
      try {
        const term = { fence: leadership.term, signal: leadership.signal };
        await section(Object.defineProperty(term, 'isHeld', { get: () => leadership.isLeader }) as Held, sid, n);
        result.completed++;
      } catch (error) {
        result.unexpected.push(describe(error));
      }
      // the last term: no other begins before the loop below sees it
      if (result.completed >= config.sections) void handle.stop();
    },
    { ttl: config.ttl, backoff: config.gapMs ?? 0 },
  );
  while (!stopping && result.completed < config.sections && performance.now() - begun < config.deadlineMs) {
    await sleep(20);
  }
  await handle.stop();
}

const begun = performance.now();
if (config.lead) await leadTerms();
for (
  let n = 1;
  !config.lead && !stopping && result.completed < config.sections && performance.now() - begun < config.deadlineMs;
  n++
) {
  const sid = `${config.id}:${n}`;
  const calledAt = performance.now();
  let leftAt: number | undefined;
  result.attempts++;
  try {
    if (config.bypassLock) {
      await section({ fence: 1, isHeld: true, signal: new AbortController().signal }, sid, n);
      result.completed++;
      continue;
    }
    const kind = config.permits && drawKind(config.permits);
    await locks.using(
      config.resource,
      async (lock) => {
        result.maxAcquireMs = Math.max(result.maxAcquireMs, performance.now() - calledAt);
        try {
          await (kind ? sharedSection(lock, sid, n, kind) : section(lock, sid, n));
        } finally {
          leftAt = performance.now();
        }
      },
      { ttl: config.ttl, wait: config.wait, retry: config.retry, ...(kind && shapeOf(kind)) },
    );
    result.completed++;
  } catch (error) {
    const code = isLockError(error) ? error.code : 'OTHER';
    result.errors[code] = (result.errors[code] ?? 0) + 1;
    if (!isLockError(error)) result.unexpected.push(describe(error));
    result.maxFailedMs = Math.max(result.maxFailedMs, performance.now() - calledAt);
    // a failed call returns at once; do not hammer a store that is down
    await sleep(20);
  }
  if (leftAt !== undefined) result.maxReleaseMs = Math.max(result.maxReleaseMs, performance.now() - leftAt);
  if (config.gapMs) await sleep(config.gapMs);
}

result.timedOut = !stopping && result.completed < config.sections;

await app.close();
await store.close();
if (lockClient instanceof GlideClient) lockClient.close();
else if (lockClient && 'isOpen' in lockClient) {
  if (lockClient.isOpen) lockClient.destroy();
} else lockClient?.disconnect();
await Promise.all(pending);
await data.quit();
// give late rejections of the shutdown a turn to be counted
await sleep(50);
result.maxAcquireMs = Math.round(result.maxAcquireMs);
result.maxReleaseMs = Math.round(result.maxReleaseMs);
result.maxFailedMs = Math.round(result.maxFailedMs);
console.log(`result ${JSON.stringify(result)}`);
process.exit(0);
