import { spawn, spawnSync } from 'node:child_process';
import { freePort } from './redis-server.js';

/** A nats-server process started for a test, on its own free port. */
export interface NatsServerHandle {
  readonly url: string;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
}

/** The nats-server binary: `NATS_SERVER_BIN`, else the one on `PATH`; fails loudly when there is none. */
function natsServerBinary(): string {
  const binary = process.env.NATS_SERVER_BIN ?? 'nats-server';
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `Cannot run "${binary}": the NATS tests need a real nats-server. Install it (Debian: apt-get install nats-server) ` +
        'or point NATS_SERVER_BIN at a binary.',
    );
  }
  return binary;
}

/** Starts a throwaway nats-server on 127.0.0.1 and a free port, and waits until it accepts clients. */
export async function startNatsServer(): Promise<NatsServerHandle> {
  const port = await freePort();
  const proc = spawn(natsServerBinary(), ['--addr', '127.0.0.1', '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nats-server on port ${port} did not start:\n${output}`)), 10_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (!output.includes('Server is ready')) return;
      clearTimeout(timer);
      proc.stderr?.off('data', onData);
      resolve();
    };
    // nats-server logs to stderr
    proc.stderr?.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`nats-server on port ${port} exited (${code}):\n${output}`));
    });
  });
  proc.stdout?.resume();
  proc.stderr?.resume();
  return {
    url: `nats://127.0.0.1:${port}`,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      });
    },
  };
}
