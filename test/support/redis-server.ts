import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';

/** A redis-server process started for a test, on its own free port. */
export interface RedisServerHandle {
  readonly port: number;
  readonly url: string;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  /** Kills the server at once (SIGKILL), like a crash. */
  kill(): Promise<void>;
  /** Starts the server again on the same port (empty: nothing is persisted). */
  start(): Promise<void>;
  /** Freezes the server (SIGSTOP): its connections stay open and nothing is answered, like a partition. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT); it then answers what it was sent meanwhile, in order. */
  resume(): void;
  readonly running: boolean;
}

/** Finds a TCP port that is free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** The redis-server binary: `REDIS_SERVER_BIN`, else the one on `PATH`; fails loudly when there is none. */
export function redisServerBinary(): string {
  const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `Cannot run "${binary}": the tests need a real redis-server. Install it (Debian: apt-get install redis-server), ` +
        'point REDIS_SERVER_BIN at a binary, or set REDIS_URL to an existing server.',
    );
  }
  return binary;
}

/** Where and how {@link startRedisServer} runs the server, beyond its command-line arguments. */
export interface RedisServerOptions {
  /**
   * Working directory of the server (`--dir`): where a replica writes the RDB it receives and a cluster
   * node keeps its `nodes.conf`. Give each such server its own; the caller creates and removes it.
   * @default os.tmpdir()
   */
  dir?: string;
  /**
   * Runs a Sentinel instead (`redis-server <file> --sentinel`) with this config file, which the Sentinel
   * rewrites as it learns the topology: give each Sentinel a file of its own. It counts as started once it
   * has printed its ID (it is listening by then).
   */
  sentinelConfig?: string;
}

/**
 * Starts a throwaway redis-server (no persistence), or a Sentinel, on a free port and waits until it
 * accepts commands.
 */
export async function startRedisServer(
  extraArgs: string[] = [],
  port?: number,
  options: RedisServerOptions = {},
): Promise<RedisServerHandle> {
  const binary = redisServerBinary();
  const chosenPort = port ?? (await freePort());
  let child: ChildProcess | undefined;
  const ready = options.sentinelConfig === undefined ? 'Ready to accept connections' : 'Sentinel ID is';

  const launch = async (): Promise<void> => {
    const args = options.sentinelConfig === undefined ? [] : [options.sentinelConfig, '--sentinel'];
    args.push('--port', String(chosenPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no');
    args.push('--dir', options.dir ?? tmpdir(), '--enable-debug-command', 'local', ...extraArgs);
    const proc = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (output.includes(ready)) {
          proc.stdout?.off('data', onData);
          resolve();
        }
      };
      proc.stdout?.on('data', onData);
      proc.once('exit', (code) => reject(new Error(`redis-server on port ${chosenPort} exited (${code}):\n${output}`)));
      setTimeout(
        () => reject(new Error(`redis-server on port ${chosenPort} did not start:\n${output}`)),
        10_000,
      ).unref();
    });
    proc.stdout?.resume();
    proc.stderr?.resume();
  };

  const terminate = async (signal: NodeJS.Signals): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill(signal);
      // a paused server would hold SIGTERM until resumed
      proc.kill('SIGCONT');
    });
  };

  await launch();
  return {
    port: chosenPort,
    url: `redis://127.0.0.1:${chosenPort}`,
    get running() {
      return child !== undefined;
    },
    stop: () => terminate('SIGTERM'),
    kill: () => terminate('SIGKILL'),
    start: launch,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
  };
}
