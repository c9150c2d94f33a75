import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { freePort, startRedisServer, type RedisServerHandle } from './redis-server.js';

/** How {@link startRedisSentinel} builds the group. */
export interface RedisSentinelOptions {
  /** Name of the monitored master, as clients ask the Sentinels for it. @default 'locks' */
  name?: string;
  /** Replicas of the master. @default 2 */
  replicas?: number;
  /** Sentinels; the failover quorum is a majority of them. @default 3 */
  sentinels?: number;
  /**
   * `down-after-milliseconds`: how long a server may not answer before a Sentinel thinks it is down. Short,
   * so a failover takes a few seconds instead of half a minute.
   * @default 1000
   */
  downAfterMs?: number;
  /**
   * `failover-timeout`: how long a failover may take before it is given up, and twice that before a failed
   * one is tried again.
   * @default 3000
   */
  failoverTimeoutMs?: number;
}

/** The ioredis options that point a client at a {@link RedisSentinelHandle}'s Sentinels (a `RedisOptions` subset). */
export interface SentinelClientOptions {
  readonly name: string;
  readonly sentinels: Array<{ host: string; port: number }>;
  /** Every announced address (`host:port` of a proxy), mapped to the server behind it. */
  readonly natMap: Record<string, { host: string; port: number }>;
}

/** One redis-server of the group, master or replica. */
export interface MonitoredServer {
  /** The process, on its own port; clients that go straight to it pass no proxy. */
  readonly process: RedisServerHandle;
  /** Its own port (where the process listens). */
  readonly port: number;
  /**
   * The port where the other servers and the Sentinels reach it: a {@link FaultProxy} in front of it. It is
   * the address it announces, so every replication link, before and after a failover, goes through it.
   */
  readonly announcedPort: number;
  readonly proxy: FaultProxy;
}

/** A throwaway master with replicas and Sentinels on 127.0.0.1, to fail over from a test. */
export interface RedisSentinelHandle {
  readonly name: string;
  /** The servers; the first is the master at the start. */
  readonly servers: readonly MonitoredServer[];
  readonly sentinels: readonly RedisServerHandle[];
  /**
   * ioredis options of a Sentinel client that follows failovers and reaches the servers directly, not
   * through their proxies (`natMap`): cutting a server off from the others leaves such clients with it.
   */
  readonly clientOptions: SentinelClientOptions;
  /**
   * The server every running Sentinel names as master now.
   * @throws Error when they do not agree, or name no server of the group.
   */
  master(): Promise<MonitoredServer>;
  /** What the server says it is (`INFO replication`), or `'down'` when it does not answer within a second. */
  role(server: MonitoredServer): Promise<'master' | 'replica' | 'down'>;
  /**
   * Partitions the server from the other servers and the Sentinels: its proxy holds every byte from now on
   * and connections stay open, so its replication links carry nothing more (for a master: writes from now
   * on reach it only) and the Sentinels see it down once a ping has gone unanswered for
   * `down-after-milliseconds`. Clients on {@link RedisSentinelHandle.clientOptions} keep it.
   */
  isolate(server: MonitoredServer): void;
  /** Ends a partition: what the proxy held is delivered, in order, and the links go on. */
  reconnect(server: MonitoredServer): void;
  /**
   * Resolves with the server that took over from `previous` once every running Sentinel names it as master
   * and it says it is one.
   * @throws Error when that does not happen within `timeoutMs` (default 30 s), naming what was last wrong.
   */
  waitForFailover(previous: MonitoredServer, timeoutMs?: number): Promise<MonitoredServer>;
  /**
   * Resolves once every running Sentinel agrees on the master, knows the other Sentinels and every running
   * replica as up and in sync, and can reach its failover quorum, and the servers say the same.
   * @throws Error when that does not happen within `timeoutMs` (default 30 s), naming what was last wrong.
   */
  waitForHealthy(timeoutMs?: number): Promise<void>;
  /** Kills the Sentinels, then the servers, closes the proxies and removes every directory. Safe to call twice. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const POLL_MS = 100;
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Starts one master, its replicas (each replicating through the master's proxy) and the Sentinels that
 * monitor them, each on free ports with a generated config, and resolves once the group is healthy.
 * @throws Error when the group does not come up (nothing is left running).
 * @example
 * const group = await startRedisSentinel();
 * const client = new Redis({ ...group.clientOptions, failoverDetector: true });
 * const master = await group.master();
 * group.isolate(master);
 * await master.process.kill();
 * const successor = await group.waitForFailover(master);
 */
export async function startRedisSentinel(options: RedisSentinelOptions = {}): Promise<RedisSentinelHandle> {
  const { name = 'locks', replicas = 2, sentinels: sentinelCount = 3 } = options;
  const { downAfterMs = 1000, failoverTimeoutMs = 3000 } = options;
  if (!Number.isInteger(replicas) || replicas < 1) throw new Error(`replicas must be 1 or more; got ${replicas}.`);
  if (!Number.isInteger(sentinelCount) || sentinelCount < 1) {
    throw new Error(`sentinels must be 1 or more; got ${sentinelCount}.`);
  }
  const servers: MonitoredServer[] = [];
  const sentinels: RedisServerHandle[] = [];
  const dirs: string[] = [];
  let stopped = false;

  const newDir = async (kind: string): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), `nestjs-lock-sentinel-${kind}-`));
    dirs.push(dir);
    return dir;
  };

  const startServer = async (replicaOf?: MonitoredServer): Promise<MonitoredServer> => {
    const dir = await newDir('server');
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const proxy = await startFaultProxy({ host: HOST, port });
      const args = ['--replica-announce-ip', HOST, '--replica-announce-port', String(proxy.port)];
      // any server can become a master: none waits for more replicas before it streams a sync
      args.push('--repl-diskless-sync-delay', '0');
      if (replicaOf) args.push('--replicaof', HOST, String(replicaOf.announcedPort));
      try {
        const handle = await startRedisServer(args, port, { dir });
        return { process: handle, port, announcedPort: proxy.port, proxy };
      } catch (error) {
        await proxy.close();
        // another process can take the port between the probe and redis-server's bind; try another one
        if (attempt === 3) throw error;
      }
    }
  };

  const startSentinel = async (master: MonitoredServer): Promise<RedisServerHandle> => {
    const dir = await newDir('sentinel');
    const config = join(dir, 'sentinel.conf');
    const quorum = Math.floor(sentinelCount / 2) + 1;
    await writeFile(
      config,
      [
        `sentinel monitor ${name} ${HOST} ${master.announcedPort} ${quorum}`,
        `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
        `sentinel failover-timeout ${name} ${failoverTimeoutMs}`,
        `sentinel parallel-syncs ${name} ${replicas}`,
        '',
      ].join('\n'),
    );
    for (let attempt = 1; ; attempt++) {
      try {
        return await startRedisServer([], await freePort(), { dir, sentinelConfig: config });
      } catch (error) {
        if (attempt === 3) throw error;
      }
    }
  };

  const byAnnouncedPort = (port: number): MonitoredServer | undefined =>
    servers.find((server) => server.announcedPort === port);

  const running = <T extends { running: boolean }>(processes: readonly T[]): T[] =>
    processes.filter((process) => process.running);

  /** The master every running Sentinel names, or why there is none. */
  const agreedMaster = async (): Promise<Attempt<MonitoredServer>> => {
    const live = running(sentinels);
    if (live.length === 0) return { waiting: 'no Sentinel is running' };
    const named = await Promise.all(
      live.map(async (sentinel) => {
        const reply = await commands(sentinel.port, [['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name]]);
        return typeof reply === 'string' ? reply : Number((reply[0] as string[])[1]);
      }),
    );
    const failed = named.find((answer): answer is string => typeof answer === 'string');
    if (failed) return { waiting: failed };
    const ports = new Set(named);
    if (ports.size > 1) return { waiting: `the Sentinels name different masters (ports ${[...ports].join(', ')})` };
    const master = byAnnouncedPort(named[0] as number);
    if (!master) return { waiting: `the Sentinels name 127.0.0.1:${named[0]}, no server of this group` };
    return { value: master };
  };

  const role = async (server: MonitoredServer): Promise<'master' | 'replica' | 'down'> => {
    if (!server.process.running) return 'down';
    const reply = await commands(server.port, [['INFO', 'replication']]);
    if (typeof reply === 'string') return 'down';
    return parseInfo(reply[0] as string).get('role') === 'master' ? 'master' : 'replica';
  };

  /** A Sentinel that does not see the master it names as simply up, or undefined. */
  const unsettledSentinel = async (): Promise<string | undefined> => {
    for (const sentinel of running(sentinels)) {
      const reply = await commands(sentinel.port, [['SENTINEL', 'MASTER', name]]);
      if (typeof reply === 'string') return reply;
      const flags = fields(reply[0] as string[]).get('flags');
      if (flags !== 'master') return `the Sentinel on port ${sentinel.port} flags the master ${flags}`;
    }
    return undefined;
  };

  /** What keeps the group from being healthy, or undefined. */
  const healthProblem = async (): Promise<string | undefined> => {
    const agreed = await agreedMaster();
    if ('waiting' in agreed) return agreed.waiting;
    const master = agreed.value;
    const expectedReplicas = running(servers.map((server) => server.process)).length - 1;
    for (const sentinel of running(sentinels)) {
      const label = `the Sentinel on port ${sentinel.port}`;
      const reply = await commands(sentinel.port, [
        ['SENTINEL', 'MASTER', name],
        ['SENTINEL', 'REPLICAS', name],
        ['SENTINEL', 'CKQUORUM', name],
      ]);
      if (typeof reply === 'string') return reply;
      const [state, replicaStates] = [fields(reply[0] as string[]), (reply[1] as string[][]).map(fields)];
      if (state.get('flags') !== 'master') return `${label} flags the master ${state.get('flags')}`;
      const others = Number(state.get('num-other-sentinels'));
      if (others !== running(sentinels).length - 1) return `${label} knows ${others} other Sentinels`;
      const healthy = replicaStates.filter(
        (replica) =>
          replica.get('flags') === 'slave' &&
          replica.get('master-link-status') === 'ok' &&
          Number(replica.get('master-port')) === master.announcedPort,
      );
      if (healthy.length < expectedReplicas) {
        return `${label} sees ${healthy.length} of ${expectedReplicas} replicas up and in sync`;
      }
    }
    if ((await role(master)) !== 'master') return `127.0.0.1:${master.port} does not say it is the master`;
    for (const server of servers.filter((candidate) => candidate !== master && candidate.process.running)) {
      const reply = await commands(server.port, [['INFO', 'replication']]);
      if (typeof reply === 'string') return reply;
      const info = parseInfo(reply[0] as string);
      if (Number(info.get('master_port')) !== master.announcedPort || info.get('master_link_status') !== 'up') {
        return `127.0.0.1:${server.port} does not replicate the master yet`;
      }
    }
    return undefined;
  };

  const waitForHealthy = async (timeoutMs = DEFAULT_TIMEOUT_MS): Promise<void> => {
    await until(
      timeoutMs,
      (reason) => `The Sentinel group was not healthy within ${timeoutMs} ms: ${reason}.`,
      async () => {
        const problem = await healthProblem();
        return problem === undefined ? { value: undefined } : { waiting: problem };
      },
    );
  };

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // the Sentinels first, so that none fails over a server that is only being stopped
    await Promise.all(sentinels.map((sentinel) => sentinel.kill()));
    await Promise.all(servers.map(async (server) => Promise.all([server.process.kill(), server.proxy.close()])));
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  };

  try {
    const master = await startServer();
    servers.push(master);
    for (let i = 0; i < replicas; i++) servers.push(await startServer(master));
    // the Sentinels learn the replicas from the master's INFO, so they start once the replicas are attached
    await until(
      DEFAULT_TIMEOUT_MS,
      (reason) => `The replicas did not attach to the master within ${DEFAULT_TIMEOUT_MS} ms: ${reason}.`,
      async () => {
        const reply = await commands(master.port, [['INFO', 'replication']]);
        if (typeof reply === 'string') return { waiting: reply };
        const online = [...parseInfo(reply[0] as string).values()].filter((value) => value.includes('state=online'));
        return online.length === replicas ? { value: undefined } : { waiting: `${online.length} replicas online` };
      },
    );
    for (let i = 0; i < sentinelCount; i++) sentinels.push(await startSentinel(master));
    await waitForHealthy();
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    name,
    servers,
    sentinels,
    clientOptions: {
      name,
      sentinels: sentinels.map((sentinel) => ({ host: HOST, port: sentinel.port })),
      natMap: Object.fromEntries(
        servers.map((server) => [`${HOST}:${server.announcedPort}`, { host: HOST, port: server.port }]),
      ),
    },
    async master() {
      const agreed = await agreedMaster();
      if ('waiting' in agreed) throw new Error(`No master agreed on: ${agreed.waiting}.`);
      return agreed.value;
    },
    role,
    // a partition, not a cut: a Sentinel whose link breaks counts the downtime from the last reply it got,
    // which can be a second old, so even a short cut could start a failover
    isolate(server) {
      server.proxy.blackhole();
    },
    reconnect(server) {
      server.proxy.heal();
    },
    async waitForFailover(previous, timeoutMs = DEFAULT_TIMEOUT_MS) {
      return until(
        timeoutMs,
        (reason) => `No server took over from 127.0.0.1:${previous.port} within ${timeoutMs} ms: ${reason}.`,
        async () => {
          const agreed = await agreedMaster();
          if ('waiting' in agreed) return agreed;
          if (agreed.value === previous) return { waiting: `the Sentinels still name 127.0.0.1:${previous.port}` };
          if ((await role(agreed.value)) !== 'master') {
            return { waiting: `127.0.0.1:${agreed.value.port} does not say it is the master yet` };
          }
          // over everywhere: no Sentinel still runs a failover (its flags would say failover_in_progress)
          const unsettled = await unsettledSentinel();
          return unsettled === undefined ? agreed : { waiting: unsettled };
        },
      );
    },
    waitForHealthy,
    stop,
  };
}

type Attempt<T> = { value: T } | { waiting: string };

async function until<T>(
  timeoutMs: number,
  failure: (reason: string) => string,
  attempt: () => Promise<Attempt<T>>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await attempt();
    if ('value' in result) return result.value;
    if (Date.now() >= deadline) throw new Error(failure(result.waiting));
    await delay(POLL_MS);
  }
}

/**
 * Sends commands on one short-lived connection and resolves with their replies, or with why not: a server
 * or Sentinel that is down (or frozen) fails fast instead of being retried.
 */
async function commands(port: number, list: string[][]): Promise<unknown[] | string> {
  const client = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 1000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // failures reach the caller through the result; without a listener ioredis would also log them
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await Promise.all(list.map(([command, ...args]) => client.call(command, ...args)));
  } catch (error) {
    return `127.0.0.1:${port} answered ${(error as Error).message}`;
  } finally {
    // after a failed connect, disconnect() would arm a timer waiting for a socket that already closed
    if (client.status !== 'end') client.disconnect();
  }
}

function parseInfo(text: string): Map<string, string> {
  const parsed = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) parsed.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return parsed;
}

/** A Sentinel reply of alternating names and values (`SENTINEL MASTER`, one entry of `SENTINEL REPLICAS`). */
function fields(flat: readonly string[]): Map<string, string> {
  const parsed = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) parsed.set(flat[i], flat[i + 1]);
  return parsed;
}
