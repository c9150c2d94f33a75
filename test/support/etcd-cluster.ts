import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './redis-server.js';

/** One etcd member process of a test cluster. */
export interface EtcdMemberHandle {
  readonly name: string;
  /** `http://127.0.0.1:<port>`, where clients talk to this member. */
  readonly clientUrl: string;
  /** `127.0.0.1:<port>`, the same without the scheme (what `hosts` takes). */
  readonly host: string;
  readonly running: boolean;
  /** Kills the member at once (SIGKILL), like a crash; its data dir stays, so `start()` brings it back. */
  kill(): Promise<void>;
  /** Starts the member again with its data dir (it rejoins the cluster). */
  start(): Promise<void>;
  /**
   * Freezes the member (SIGSTOP): its connections stay open and it answers nobody, peers nor clients.
   * Resolves once the kernel shows the process stopped, so nothing sent after it is answered.
   */
  pause(): Promise<void>;
  /** Lets a paused member run again (SIGCONT). */
  resume(): void;
}

/** A throwaway etcd cluster on free ports of 127.0.0.1, with its data in a temporary folder. */
export interface EtcdClusterHandle {
  readonly members: readonly EtcdMemberHandle[];
  /** Every member's `host:port` for clients. */
  readonly hosts: string[];
  /** The member that leads right now (asked over the HTTP gateway of the running, answering members). */
  leader(): Promise<EtcdMemberHandle>;
  /** Deletes a key behind its holder's back, as an operator would (`etcdctl del`). */
  deleteKey(key: string | Buffer): Promise<void>;
  /** Revokes the lease a key is attached to (`etcdctl lease revoke`), which deletes the key with it. */
  revokeLeaseOf(key: string | Buffer): Promise<void>;
  /** Kills every member, then starts them all again from their data dirs, and waits for a leader. */
  restart(): Promise<void>;
  /** Stops every member and removes the data folder. */
  stop(): Promise<void>;
  /** The folder every member keeps its data in (removed by `stop()`). */
  readonly dataDir: string;
}

/**
 * Timing for a shared, loaded 2-core machine: a heartbeat every 200 ms and an election after 1.2 s of silence
 * (defaults 100 / 1000), so a busy machine does not make the members elect again and again. etcd's least lease
 * TTL follows from these (1.5 election timeouts, rounded up to whole seconds: 2 s, as with the defaults).
 */
const HEARTBEAT_MS = 200;
const ELECTION_MS = 1200;
const START_TIMEOUT = 30_000;
/** What a member logs once it serves clients (zap logger). */
const READY = /serving client traffic/;

/** The etcd binary: `ETCD_BIN`, else the one on `PATH`; fails loudly when there is none. */
export function etcdBinary(): string {
  const binary = process.env.ETCD_BIN ?? 'etcd';
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `Cannot run "${binary}": the etcd tests need a real etcd. Install it (Debian: apt-get install etcd-server) ` +
        'or point ETCD_BIN at a binary.',
    );
  }
  return binary;
}

/** Starts a cluster of `size` members and waits until every member serves clients (a leader is elected). */
export async function startEtcdCluster(size = 3): Promise<EtcdClusterHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchCluster(size);
    } catch (error) {
      // a free port can be taken by another process between the check and etcd's bind: try other ports
      if (attempt >= 3 || !/address already in use/.test(String(error))) throw error;
    }
  }
}

/** `size` distinct ports that were free a moment ago (two calls of freePort() may name the same port). */
async function distinctPorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

async function launchCluster(size: number): Promise<EtcdClusterHandle> {
  const binary = etcdBinary();
  const dir = await mkdtemp(join(tmpdir(), 'nestjs-lock-etcd-'));
  const token = `test-${process.pid}-${Date.now().toString(36)}`;
  const free = await distinctPorts(2 * size);
  const ports = Array.from({ length: size }, (_, index) => ({ client: free[2 * index], peer: free[2 * index + 1] }));
  const initialCluster = ports.map((port, index) => `m${index}=http://127.0.0.1:${port.peer}`).join(',');

  const members = ports.map((port, index) => {
    const name = `m${index}`;
    const clientUrl = `http://127.0.0.1:${port.client}`;
    const args = [
      '--name',
      name,
      '--data-dir',
      join(dir, name),
      '--listen-client-urls',
      clientUrl,
      '--advertise-client-urls',
      clientUrl,
      '--listen-peer-urls',
      `http://127.0.0.1:${port.peer}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${port.peer}`,
      '--initial-cluster',
      initialCluster,
      '--initial-cluster-token',
      token,
      '--initial-cluster-state',
      'new',
      '--heartbeat-interval',
      String(HEARTBEAT_MS),
      '--election-timeout',
      String(ELECTION_MS),
      '--log-level',
      'info',
      '--logger',
      'zap',
    ];
    return new EtcdMember(binary, name, clientUrl, args);
  });

  const startAll = async (): Promise<void> => {
    await Promise.all(members.map((member) => member.start()));
  };
  try {
    await startAll();
  } catch (error) {
    await Promise.all(members.map((member) => member.kill()));
    await rm(dir, { recursive: true, force: true });
    throw error;
  }

  const gateway = async (path: string, body: object): Promise<unknown> => {
    let lastError: unknown;
    for (const member of members) {
      if (!member.running || member.paused) continue;
      try {
        const response = await fetch(`${member.clientUrl}${path}`, {
          method: 'POST',
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(3000),
        });
        if (response.ok) return await response.json();
        lastError = new Error(`${member.name} answered ${response.status}: ${await response.text()}`);
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError ?? new Error('no etcd member is running');
  };

  return {
    members,
    dataDir: dir,
    hosts: members.map((member) => member.host),
    async leader() {
      for (const member of members) {
        if (!member.running || member.paused) continue;
        try {
          const response = await fetch(`${member.clientUrl}/v3/maintenance/status`, {
            method: 'POST',
            body: '{}',
            signal: AbortSignal.timeout(3000),
          });
          const status = (await response.json()) as { header?: { member_id?: string }; leader?: string };
          if (status.leader && status.leader === status.header?.member_id) return member;
        } catch {
          // a member that does not answer is not the leader we can use
        }
      }
      throw new Error('no member of the etcd cluster says it leads');
    },
    async deleteKey(key) {
      await gateway('/v3/kv/deleterange', { key: Buffer.from(key).toString('base64') });
    },
    async revokeLeaseOf(key) {
      const found = (await gateway('/v3/kv/range', { key: Buffer.from(key).toString('base64') })) as {
        kvs?: Array<{ lease?: string }>;
      };
      const lease = found.kvs?.[0]?.lease;
      if (!lease) throw new Error('the key has no lease to revoke');
      await gateway('/v3/lease/revoke', { ID: lease });
    },
    async restart() {
      await Promise.all(members.map((member) => member.kill()));
      await startAll();
    },
    async stop() {
      await Promise.all(members.map((member) => member.kill()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

class EtcdMember implements EtcdMemberHandle {
  private child?: ChildProcess;
  paused = false;
  readonly host: string;

  constructor(
    private readonly binary: string,
    readonly name: string,
    readonly clientUrl: string,
    private readonly args: readonly string[],
  ) {
    this.host = new URL(clientUrl).host;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Starts the process and resolves once it serves clients (which needs a quorum of its cluster). */
  async start(): Promise<void> {
    if (this.child) return;
    const proc = spawn(this.binary, this.args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = proc;
    this.paused = false;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`etcd member ${this.name} did not serve clients within ${START_TIMEOUT} ms:\n${output}`));
      }, START_TIMEOUT);
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (READY.test(output)) {
          cleanup();
          resolve();
        }
      };
      const onExit = (code: number | null): void => {
        cleanup();
        if (this.child === proc) this.child = undefined;
        reject(new Error(`etcd member ${this.name} exited (${code}):\n${output}`));
      };
      const cleanup = (): void => {
        clearTimeout(timer);
        proc.stderr?.off('data', onData);
        proc.off('exit', onExit);
      };
      proc.stderr?.on('data', onData);
      proc.once('exit', onExit);
    });
    // keep draining: a full pipe would block the member
    proc.stderr?.resume();
    proc.once('exit', () => {
      if (this.child === proc) this.child = undefined;
    });
  }

  async kill(): Promise<void> {
    const proc = this.child;
    this.child = undefined;
    this.paused = false;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  }

  async pause(): Promise<void> {
    const pid = this.child?.pid;
    if (!this.child || pid === undefined) return;
    this.paused = true;
    this.child.kill('SIGSTOP');
    // a signal is delivered when the process is next scheduled: on a busy machine, some ms later
    for (let tries = 0; tries < 200 && !(await isStopped(pid)); tries++) await sleep(5);
  }

  resume(): void {
    if (!this.child) return;
    this.paused = false;
    this.child.kill('SIGCONT');
  }
}

/** Whether Linux shows the process stopped (state `T` in /proc/<pid>/stat). */
async function isStopped(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return / T /.test(stat.slice(stat.lastIndexOf(')')));
}
