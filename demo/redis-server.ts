import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { ChildProcesses } from './child-processes.js';

/** A redis-server the demo started for itself. */
export interface OwnRedis {
  readonly url: string;
  readonly process: ChildProcess;
}

/**
 * Runs redis-server under a shell that kills it when its stdin closes: the demo holds the other end, so
 * the server goes away with the demo however the demo ends, even on SIGKILL.
 */
const WATCHDOG = [
  'command -v redis-server > /dev/null || { echo "redis-server is not installed" >&2; exit 127; }',
  'redis-server "$@" & server=$!',
  'cat > /dev/null',
  'kill $server 2> /dev/null',
  'wait $server',
].join('\n');

/**
 * Starts a throwaway redis-server (no persistence) on a free port and waits until it accepts commands.
 * @throws Error with the server's output when it is missing or not ready within 10 s
 */
export async function startOwnRedis(processes: ChildProcesses): Promise<OwnRedis> {
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child = processes.spawn(
    'sh',
    ['-c', WATCHDOG, 'redis-server', ...args],
    { stdio: ['pipe', 'pipe', 'pipe'] },
    { stop: (shell) => shell.stdin?.end(), last: true },
  );
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server was not ready after 10 s:\n${output}`)), 10_000);
      child.stdout?.on('data', () => {
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(
          new Error(`redis-server exited (${code}) before it was ready; set REDIS_URL to use another.\n${output}`),
        );
      });
    });
  } catch (error) {
    await processes.stop(child);
    throw error;
  }
  child.stdout?.removeAllListeners('data').resume();
  child.stderr?.removeAllListeners('data').resume();
  return { url: `redis://127.0.0.1:${port}`, process: child };
}

/** A TCP port that is free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
