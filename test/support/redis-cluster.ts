import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { keySlot } from '../../lib/utils/key-slot.js';
import { startRedisServer, type RedisServerHandle } from './redis-server.js';

/** How {@link startRedisCluster} builds the cluster. */
export interface RedisClusterOptions {
  /**
   * Number of masters; the slots are split evenly between them. `redis-cli --cluster create` needs at least 3.
   * @default 3
   */
  masters?: number;
  /**
   * Replicas attached to each master.
   * @default 1
   */
  replicasPerMaster?: number;
  /**
   * `cluster-node-timeout` in ms: how long a node may be unreachable before the others fail it over.
   * Small, so a failover takes a couple of seconds instead of half a minute.
   * @default 1000
   */
  nodeTimeout?: number;
  /**
   * Extra redis-server arguments for every node.
   * @default []
   */
  extraArgs?: string[];
}

/** The role a cluster node plays. */
export type RedisClusterRole = 'master' | 'replica';

/** One redis-server process of a test cluster. */
export interface RedisClusterNode {
  readonly port: number;
  readonly url: string;
  /** The role as the cluster last reported it (refreshed by every method that waits on the cluster). */
  readonly role: RedisClusterRole;
  /** False between {@link RedisClusterHandle.killNode} and {@link RedisClusterHandle.restartNode}. */
  readonly running: boolean;
}

/** A throwaway Redis Cluster on 127.0.0.1, one process per node, to crash and heal from a test. */
export interface RedisClusterHandle {
  readonly nodes: readonly RedisClusterNode[];
  /** Every node's address, in the shape `new Cluster(startupNodes)` takes. */
  readonly startupNodes: { host: string; port: number }[];
  /**
   * Port of the master that serves `slot`, as the cluster sees it now (possibly a master that is down
   * but not failed over yet).
   * @throws Error when no node knows a master for the slot.
   */
  masterForSlot(slot: number): Promise<number>;
  /** Port of the master that serves `key` (hash tags included); see {@link RedisClusterHandle.masterForSlot}. */
  masterForKey(key: string | Buffer): Promise<number>;
  /** Ports of the nodes that currently replicate the master on `masterPort`. */
  replicasOf(masterPort: number): Promise<number[]>;
  /** Kills a node at once (SIGKILL), like a crash. Resolves when the process has exited. */
  killNode(port: number): Promise<void>;
  /**
   * Starts a killed node again on the same port with its `nodes.conf`, so it rejoins under its old identity,
   * and resolves once the cluster has converged with it (a master that was failed over comes back as a replica).
   * @throws Error when the node is running or the cluster does not converge in time.
   */
  restartNode(port: number, timeoutMs?: number): Promise<void>;
  /**
   * Resolves with the port of the replica that took over the slots of `oldMasterPort` once every running
   * node agrees on it and reports `cluster_state:ok`.
   * @throws Error when the node served no slots, or no replica took over within `timeoutMs` (default 20 s).
   */
  waitForFailover(oldMasterPort: number, timeoutMs?: number): Promise<number>;
  /**
   * Resolves once every running node reports `cluster_state:ok` with all 16384 slots served, all of them agree
   * on who serves what and who replicates whom, and every running replica is in sync with its master.
   * @throws Error when that does not happen within `timeoutMs` (default 20 s), naming what was last wrong.
   */
  waitForHealthy(timeoutMs?: number): Promise<void>;
  /** Kills every node and removes their directories. Safe to call twice. */
  stop(): Promise<void>;
}

const SLOTS = 16384;
const POLL_MS = 100;
const DEFAULT_TIMEOUT_MS = 20_000;
const BUS_PORT_OFFSET = 10_000;

/** The cluster slot of a key, as the library computes it (checked against CLUSTER KEYSLOT in the specs). */
export { keySlot };

/** The redis-cli binary: `REDIS_CLI_BIN`, else the one on `PATH`; fails loudly when there is none. */
export function redisCliBinary(): string {
  const binary = process.env.REDIS_CLI_BIN ?? 'redis-cli';
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `Cannot run "${binary}": the cluster tests need redis-cli to create the cluster. Install it ` +
        '(Debian: apt-get install redis-tools) or point REDIS_CLI_BIN at a binary.',
    );
  }
  return binary;
}

/**
 * Starts `masters * (1 + replicasPerMaster)` redis-server processes in cluster mode, joins them with
 * `redis-cli --cluster create` and resolves once the cluster is healthy.
 * @throws Error when the options are impossible or the cluster does not come up (nothing is left running).
 * @example
 * const cluster = await startRedisCluster();
 * const client = new Cluster(cluster.startupNodes);
 * const master = await cluster.masterForKey('orders');
 * await cluster.killNode(master);
 * const successor = await cluster.waitForFailover(master);
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisClusterHandle> {
  const { masters = 3, replicasPerMaster = 1, nodeTimeout = 1000, extraArgs = [] } = options;
  if (!Number.isInteger(masters) || masters < 3) {
    throw new Error(`A Redis Cluster needs at least 3 masters; got masters: ${masters}.`);
  }
  if (!Number.isInteger(replicasPerMaster) || replicasPerMaster < 0) {
    throw new Error(`replicasPerMaster must be a whole number >= 0; got ${replicasPerMaster}.`);
  }
  const cli = redisCliBinary();
  const members: Member[] = [];
  const reservedPorts = new Set<number>();
  let lastView: NodeView[] = [];
  let stopped = false;

  const nodeArgs = (dir: string): string[] => [
    ...['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf')],
    ...['--cluster-node-timeout', String(nodeTimeout)],
    // A replica whose link to a dead master looks too old refuses to take over; tests kill masters at any moment.
    ...['--cluster-replica-validity-factor', '0'],
    // Otherwise a master waits 5 s for more replicas before it streams the first sync.
    ...['--repl-diskless-sync-delay', '0'],
    ...extraArgs,
  ];

  const startMember = async (): Promise<Member> => {
    const dir = await mkdtemp(join(tmpdir(), 'nestjs-lock-cluster-'));
    for (let attempt = 1; ; attempt++) {
      const port = await clusterPort(reservedPorts);
      try {
        const server = await startRedisServer(nodeArgs(dir), port, { dir });
        const member: Member = { server, dir, id: '' };
        members.push(member);
        return member;
      } catch (error) {
        // Another process can take a port between the probe and redis-server's bind; try another one.
        if (attempt === 3) {
          await rm(dir, { recursive: true, force: true });
          throw error;
        }
      }
    }
  };

  const memberOn = (port: number): Member => {
    const member = members.find((candidate) => candidate.server.port === port);
    if (!member) throw new Error(`No node of this cluster listens on port ${port}.`);
    return member;
  };

  const converged = async (): Promise<Attempt<NodeView[]>> => {
    const running = members.filter((member) => member.server.running);
    const observations = await Promise.all(running.map((member) => observe(member.server.port)));
    const failed = observations.find((observation): observation is string => typeof observation === 'string');
    if (failed) return { waiting: failed };
    const seen = observations as Observation[];
    const problem = healthProblem(seen, running.map(portOf));
    if (problem) return { waiting: problem };
    lastView = seen[0].nodes;
    return { value: lastView };
  };

  const waitForHealthy = async (timeoutMs = DEFAULT_TIMEOUT_MS): Promise<void> => {
    await until(
      timeoutMs,
      (reason) => `The Redis Cluster was not healthy within ${timeoutMs} ms: ${reason}.`,
      converged,
    );
  };

  const liveView = async (): Promise<NodeView[]> => {
    let reason = 'no node is running';
    for (const member of members.filter((candidate) => candidate.server.running)) {
      const observation = await observe(member.server.port);
      if (typeof observation !== 'string') return (lastView = observation.nodes);
      reason = observation;
    }
    throw new Error(`Cannot read the cluster topology: ${reason}.`);
  };

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await Promise.all(
      members.map(async (member) => {
        await member.server.kill();
        await rm(member.dir, { recursive: true, force: true });
      }),
    );
  };

  try {
    const total = masters * (1 + replicasPerMaster);
    const started = await Promise.allSettled(Array.from({ length: total }, startMember));
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    const addresses = members.map((member) => `127.0.0.1:${member.server.port}`);
    const replicas = ['--cluster-replicas', String(replicasPerMaster)];
    await runCli(cli, ['--cluster', 'create', ...addresses, ...replicas, '--cluster-yes']);
    for (const member of members) [member.id] = await nodeCommands(member.server.port, [['CLUSTER', 'MYID']]);
    await waitForHealthy();
  } catch (error) {
    await stop();
    throw error;
  }

  const nodes: RedisClusterNode[] = members.map((member) => ({
    port: member.server.port,
    url: member.server.url,
    get role() {
      return lastView.find((view) => view.id === member.id)?.role ?? 'master';
    },
    get running() {
      return member.server.running;
    },
  }));

  const masterForSlot = async (slot: number): Promise<number> => {
    if (!Number.isInteger(slot) || slot < 0 || slot >= SLOTS) {
      throw new Error(`A slot is a whole number from 0 to ${SLOTS - 1}; got ${slot}.`);
    }
    const owner = ownerOf(await liveView(), slot);
    if (owner === undefined) throw new Error(`No master of the cluster serves slot ${slot}.`);
    return owner;
  };

  return {
    nodes,
    startupNodes: members.map((member) => ({ host: '127.0.0.1', port: member.server.port })),
    masterForSlot,
    masterForKey: (key) => masterForSlot(keySlot(key)),
    async replicasOf(masterPort) {
      const { id } = memberOn(masterPort);
      return (await liveView()).filter((view) => view.masterId === id).map((view) => view.port);
    },
    async killNode(port) {
      const member = memberOn(port);
      // The slots a master served are what waitForFailover watches for; read them while it can still answer.
      if (member.server.running) await liveView().catch(() => undefined);
      await member.server.kill();
    },
    async restartNode(port, timeoutMs = DEFAULT_TIMEOUT_MS) {
      const member = memberOn(port);
      if (member.server.running) throw new Error(`The node on port ${port} is running; kill it before restarting it.`);
      await member.server.start();
      await waitForHealthy(timeoutMs);
    },
    async waitForFailover(oldMasterPort, timeoutMs = DEFAULT_TIMEOUT_MS) {
      const { id } = memberOn(oldMasterPort);
      const ranges = lastView.find((view) => view.id === id)?.slots ?? [];
      if (ranges.length === 0) {
        throw new Error(
          `127.0.0.1:${oldMasterPort} served no slots when last seen, so there is no failover to wait for.`,
        );
      }
      return until(
        timeoutMs,
        (reason) => `No replica took over from 127.0.0.1:${oldMasterPort} within ${timeoutMs} ms: ${reason}.`,
        async () => {
          const state = await converged();
          if ('waiting' in state) return state;
          const owners = new Set(ranges.map(([first]) => ownerOf(state.value, first)));
          const [owner] = owners;
          if (owner === oldMasterPort) return { waiting: `127.0.0.1:${oldMasterPort} still serves its slots` };
          if (owners.size === 1 && owner !== undefined) return { value: owner };
          return { waiting: 'its slots are not served by one master' };
        },
      );
    },
    waitForHealthy,
    stop,
  };
}

interface Member {
  readonly server: RedisServerHandle;
  readonly dir: string;
  /** The cluster node ID; it survives restarts because `nodes.conf` stays in `dir`. */
  id: string;
}

const portOf = (member: Member): number => member.server.port;

interface NodeView {
  id: string;
  port: number;
  role: RedisClusterRole;
  masterId?: string;
  myself: boolean;
  failing: boolean;
  flags: string;
  slots: Array<[number, number]>;
}

interface Observation {
  port: number;
  info: Map<string, string>;
  replication: Map<string, string>;
  nodes: NodeView[];
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

/** Sends commands on one short-lived connection; a node that is down fails fast instead of being retried. */
async function nodeCommands(port: number, commands: string[][]): Promise<string[]> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 2000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // Failures reach the caller through the rejected promise; without a listener ioredis would also log them.
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await Promise.all(commands.map(async ([name, ...args]) => String(await client.call(name, ...args))));
  } finally {
    // After a failed connect, disconnect() would arm a 2 s timer waiting for a socket that already closed.
    if (client.status !== 'end') client.disconnect();
  }
}

async function observe(port: number): Promise<Observation | string> {
  try {
    const [info, nodes, replication] = await nodeCommands(port, [
      ['CLUSTER', 'INFO'],
      ['CLUSTER', 'NODES'],
      ['INFO', 'replication'],
    ]);
    return { port, info: parseInfo(info), replication: parseInfo(replication), nodes: parseClusterNodes(nodes) };
  } catch (error) {
    return `127.0.0.1:${port} does not answer (${(error as Error).message})`;
  }
}

function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

/** Parses `CLUSTER NODES`: `<id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch> <link> <slot>...`. */
function parseClusterNodes(text: string): NodeView[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [id = '', address = '', flags = '', master = '-', , , , , ...slots] = line.trim().split(' ');
      const flagList = flags.split(',');
      return {
        id,
        port: Number(address.split('@')[0].split(':').pop()),
        role: flagList.includes('slave') ? 'replica' : 'master',
        masterId: master === '-' ? undefined : master,
        myself: flagList.includes('myself'),
        failing: flagList.some((flag) => ['fail', 'fail?', 'handshake', 'noaddr'].includes(flag)),
        flags,
        slots: slots
          .filter((slot) => !slot.startsWith('['))
          .map((slot): [number, number] => {
            const [first, last = first] = slot.split('-').map(Number);
            return [first, last];
          }),
      };
    });
}

function ownerOf(view: NodeView[], slot: number): number | undefined {
  return view.find(
    (node) => node.role === 'master' && node.slots.some(([first, last]) => slot >= first && slot <= last),
  )?.port;
}

/** What keeps the running nodes from being a healthy cluster that agrees with itself, or undefined. */
function healthProblem(observations: Observation[], runningPorts: number[]): string | undefined {
  if (observations.length === 0) return 'no node is running';
  for (const { port, info, replication, nodes } of observations) {
    const state = info.get('cluster_state');
    if (state !== 'ok') return `127.0.0.1:${port} reports cluster_state:${state}`;
    const served = info.get('cluster_slots_ok');
    if (served !== String(SLOTS)) return `127.0.0.1:${port} sees ${served} of ${SLOTS} slots served`;
    const link = replication.get('master_link_status');
    if (replication.get('role') === 'slave' && link !== 'up') {
      return `replica 127.0.0.1:${port} has master_link_status:${link}`;
    }
    for (const other of runningPorts) {
      const view = nodes.find((node) => node.port === other);
      if (!view) return `127.0.0.1:${port} does not know 127.0.0.1:${other}`;
      if (view.failing) return `127.0.0.1:${port} flags 127.0.0.1:${other} as ${view.flags}`;
    }
  }
  const topology = ({ nodes }: Observation): string =>
    nodes
      .filter((node) => runningPorts.includes(node.port) || node.slots.length > 0)
      .map((node) => {
        const master = nodes.find((candidate) => candidate.id === node.masterId)?.port ?? '-';
        return `${node.port}:${node.role}:${master}:${node.slots.map((range) => range.join('-')).join(',')}`;
      })
      .sort()
      .join(' ');
  const [first, ...others] = observations;
  const disagreeing = others.find((observation) => topology(observation) !== topology(first));
  if (disagreeing) return `127.0.0.1:${first.port} and 127.0.0.1:${disagreeing.port} disagree on the topology`;
  return undefined;
}

/**
 * A port that is free on 127.0.0.1 together with its cluster bus port (port + 10000). Both are drawn below
 * the usual ephemeral range (32768+) so outgoing connections cannot take them before redis-server binds.
 */
async function clusterPort(reserved: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * 12_000);
    const bus = port + BUS_PORT_OFFSET;
    if ([port, bus].some((candidate) => reserved.has(candidate))) continue;
    reserved.add(port).add(bus);
    if ((await portIsFree(port)) && (await portIsFree(bus))) return port;
  }
  throw new Error('Found no free pair of ports (port and port + 10000) for a cluster node.');
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function runCli(cli: string, args: string[]): Promise<void> {
  const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
  );
  clearTimeout(timer);
  if (code !== 0) {
    throw new Error(`${cli} ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${output}`);
  }
}
