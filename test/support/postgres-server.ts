import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server.js';

/** A PostgreSQL server started for a test: its own cluster in a temp dir, on its own free port. */
export interface PostgresServerHandle {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication: no password). */
  readonly url: string;
  /** Where the cluster's data and its socket live. */
  readonly dir: string;
  readonly running: boolean;
  /** Starts the server again on the same port and data (what was committed is kept). */
  start(): Promise<void>;
  /** Fast shutdown (SIGINT): backends are ended, the data is kept; waits for the exit. */
  stop(): Promise<void>;
  /** Kills the postmaster and every backend at once (SIGKILL), like a crash of the machine's server. */
  kill(): Promise<void>;
  /** Freezes every process of the server (SIGSTOP): connections stay open, nothing is answered. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
  /** Stops the server and removes its data directory. */
  destroy(): Promise<void>;
}

/** The directory of Debian's PostgreSQL binaries (`initdb`, `postgres`): `PG_BIN`, else the newest installed. */
export function postgresBinaries(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => existsSync(join(root, name, 'bin', 'postgres')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    throw new Error(
      'No PostgreSQL server binaries in /usr/lib/postgresql/*/bin: the tests need a real PostgreSQL. Install it ' +
        '(Debian: apt-get install postgresql) or point PG_BIN at the directory holding initdb and postgres.',
    );
  }
  return join(root, versions[0], 'bin');
}

/** PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  if (!uid)
    throw new Error(
      'Running as root, the tests need the "postgres" user to run PostgreSQL as (apt-get install postgresql)',
    );
  return { uid, gid };
}

/**
 * Starts a throwaway PostgreSQL cluster: `initdb` into a fresh temp dir, then `postgres` on a free port of
 * 127.0.0.1 (its socket in the same dir), without fsync (the tests need speed, not durability across a power
 * loss; a crash of the server process alone loses nothing committed). Waits until it accepts connections.
 */
export async function startPostgresServer(settings: Record<string, string> = {}): Promise<PostgresServerHandle> {
  const bin = postgresBinaries();
  const user = serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'nestjs-lock-pg-'));
  const data = join(dir, 'data');
  if (user) chownSync(dir, user.uid, user.gid);
  const asServer: SpawnOptions = user ? { uid: user.uid, gid: user.gid } : {};
  const init = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '--no-instructions', '-E', 'UTF8', '--locale=C'],
    { ...asServer, encoding: 'utf8' },
  );
  if (init.status !== 0) throw new Error(`initdb failed (${init.status}):\n${init.stdout}${init.stderr}`);
  const port = await freePort();
  let child: ChildProcess | undefined;

  const options = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    fsync: 'off',
    full_page_writes: 'off',
    max_connections: '200',
    ...settings,
  };

  const launch = async (): Promise<void> => {
    const args = ['-D', data, '-p', String(port), ...Object.entries(options).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
    const proc = spawn(join(bin, 'postgres'), args, { ...asServer, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (output.includes('database system is ready to accept connections')) {
          proc.stderr?.off('data', onData);
          proc.off('exit', onExit);
          resolve();
        }
      };
      const onExit = (code: number | null): void =>
        reject(new Error(`postgres on port ${port} exited (${code}):\n${output}`));
      proc.stderr?.on('data', onData);
      proc.stdout?.on('data', onData);
      proc.once('exit', onExit);
      setTimeout(() => reject(new Error(`postgres on port ${port} did not start:\n${output}`)), 30_000).unref();
    });
    proc.stdout?.resume();
    proc.stderr?.resume();
  };

  const terminate = async (signal: NodeJS.Signals): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    let killed: number[] = [];
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      if (signal === 'SIGKILL') killed = signalServer(proc, 'SIGKILL');
      else {
        proc.kill(signal);
        signalServer(proc, 'SIGCONT');
      }
    });
    // the postmaster's exit says nothing of its backends': one still attached to the shared memory would make
    // the next start refuse the data directory ("pre-existing shared memory block is still in use")
    await allExited(killed);
  };

  await launch();
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dir,
    get running() {
      return child !== undefined;
    },
    start: launch,
    stop: () => terminate('SIGINT'),
    kill: () => terminate('SIGKILL'),
    pause: () => child && signalServer(child, 'SIGSTOP'),
    resume: () => child && signalServer(child, 'SIGCONT'),
    async destroy() {
      await terminate('SIGINT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Signals the postmaster and each of its children: every backend runs in a session of its own (PostgreSQL
 * calls setsid), so no process group holds them all.
 */
function signalServer(proc: ChildProcess, signal: NodeJS.Signals): number[] {
  const children = spawnSync('pgrep', ['-P', String(proc.pid)], { encoding: 'utf8' }).stdout.split('\n');
  const pids = [proc.pid!, ...children.filter(Boolean).map(Number)];
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // it exited meanwhile
    }
  }
  return pids;
}

/** Resolves once none of `pids` runs any more (gone, or a zombie: its memory is released either way). */
async function allExited(pids: readonly number[], timeout = 10_000): Promise<void> {
  const deadline = Date.now() + timeout;
  const running = (pid: number): boolean => {
    try {
      return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
    } catch {
      return false;
    }
  };
  while (pids.some(running)) {
    if (Date.now() > deadline) throw new Error(`postgres processes ${pids.filter(running).join(', ')} still run`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A pool for a test's own setup and checks. An idle connection the server ends is only dropped (the pool opens
 * another at the next query), as the store's own pool does: without a listener, pg raises the end of an idle
 * connection as an unhandled 'error' that fails whichever test is running.
 */
export function adminPool(pg: { Pool: typeof import('pg').Pool }, url: string, max: number): import('pg').Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => undefined);
  return pool;
}
