import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server.js';

/** A PgBouncer in transaction mode in front of a test's PostgreSQL, on its own free port. */
export interface PgBouncerHandle {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres`, through the pooler. */
  readonly url: string;
  readonly running: boolean;
  /** Starts the pooler again on the same port. */
  start(): Promise<void>;
  /** Kills the pooler at once (SIGKILL): every client connection through it is cut. */
  kill(): Promise<void>;
  /** Stops the pooler and removes its files. */
  stop(): Promise<void>;
}

/** Debian's `pgbouncer`: `PGBOUNCER_BIN`, else the one on `PATH`; fails loudly when there is none. */
function pgbouncerBinary(): string {
  const binary = process.env.PGBOUNCER_BIN ?? 'pgbouncer';
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(`Cannot run "${binary}": install it (Debian: apt-get install pgbouncer) or set PGBOUNCER_BIN.`);
  }
  return binary;
}

/**
 * Starts PgBouncer in transaction mode (a server connection per transaction, no session kept: LISTEN does
 * not work through it) in front of the PostgreSQL on `serverPort`, trusting every user as the server does.
 */
export async function startPgBouncer(serverPort: number): Promise<PgBouncerHandle> {
  const binary = pgbouncerBinary();
  const dir = mkdtempSync(join(tmpdir(), 'nestjs-lock-pgbouncer-'));
  const port = await freePort();
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=127.0.0.1 port=${serverPort}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 500',
      'default_pool_size = 10',
      'ignore_startup_parameters = extra_float_digits,options',
      '',
    ].join('\n'),
  );
  // PgBouncer refuses to run as root: as root, it runs as the "postgres" user
  const asUser: SpawnOptions = {};
  if (process.getuid?.() === 0) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, uid, gid);
    Object.assign(asUser, { uid, gid });
  }
  let child: ChildProcess | undefined;

  const launch = async (): Promise<void> => {
    const proc = spawn(binary, [ini], { ...asUser, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let output = '';
    proc.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    proc.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const started = Date.now();
    while (!(await accepts(port))) {
      if (proc.exitCode !== null) throw new Error(`pgbouncer on port ${port} exited (${proc.exitCode}):\n${output}`);
      if (Date.now() - started > 10_000) throw new Error(`pgbouncer on port ${port} did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const kill = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  };

  await launch();
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    get running() {
      return child !== undefined;
    },
    start: launch,
    kill,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
