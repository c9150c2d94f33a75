import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const loader = fileURLToPath(new URL('../../scripts/register-ts.js', import.meta.url));

/** A TypeScript program running in its own Node process, for what only several processes show. */
export interface ChildHandle {
  readonly process: ChildProcess;
  /** Everything the child printed to stdout so far. */
  readonly output: () => string;
  /** Everything the child printed to stderr so far. */
  readonly errorOutput: () => string;
  /** Writes `line` and a newline to the child's stdin. */
  send(line: string): void;
  /**
   * Resolves when the child prints `text` (after the first `since` characters of its output, when given);
   * rejects if it exits first or after `timeout`.
   */
  waitFor(text: string, timeout?: number, since?: number): Promise<void>;
  /** Kills the child (SIGKILL by default, like a crash) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** How {@link startChild} runs Node, beyond the child's environment. */
export interface ChildOptions {
  /** Extra Node flags, e.g. `--expose-gc`. */
  readonly nodeArgs?: readonly string[];
}

/**
 * Starts `file` (TypeScript, run through scripts/ts-loader.js). The child's stdin is a pipe it should
 * watch: when the test process dies, the pipe closes and the child exits, so nothing is left behind.
 */
export function startChild(file: string, env: Record<string, string>, options: ChildOptions = {}): ChildHandle {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', loader, file], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  // a write to a child that already exited fails with EPIPE; the exit itself is what the test sees
  child.stdin?.on('error', () => undefined);
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    process: child,
    output: () => stdout,
    errorOutput: () => stderr,
    send(line) {
      child.stdin?.write(`${line}\n`);
    },
    waitFor(text, timeout = 20_000, since = 0) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!stdout.includes(text, since)) return;
          cleanup();
          resolve();
        };
        const onExit = (): void => {
          cleanup();
          reject(new Error(`child ${file} exited before printing "${text}":\n${stdout}\n${stderr}`));
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`child ${file} did not print "${text}" within ${timeout} ms:\n${stdout}\n${stderr}`));
        }, timeout);
        const cleanup = (): void => {
          clearTimeout(timer);
          child.stdout?.off('data', check);
          child.off('exit', onExit);
        };
        child.stdout?.on('data', check);
        child.once('exit', onExit);
        check();
      });
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      child.stdin?.destroy();
      await exited;
    },
  };
}
