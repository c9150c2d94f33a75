import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ChildProcesses } from './child-processes.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const loader = fileURLToPath(new URL('../scripts/register-ts.js', import.meta.url));
const main = fileURLToPath(new URL('../sample/main.ts', import.meta.url));
const link = fileURLToPath(new URL('./instance-link.ts', import.meta.url));

/** One running instance of the sample app. */
export interface SampleInstance {
  readonly id: string;
  readonly url: string;
  readonly process: ChildProcess;
  /** The last lines it printed, for error messages. */
  output(): string;
  stop(): Promise<void>;
}

/** How to start an instance. */
export interface InstanceSettings {
  readonly id: string;
  readonly redisUrl: string;
  readonly keyPrefix: string;
  readonly locks: boolean;
}

/** An instance that was spawned and is booting. */
export interface StartingInstance {
  readonly id: string;
  readonly pid: number | undefined;
  /** Resolves when the app listens; rejects if it exits first or is not ready within 60 s (then it is stopped). */
  readonly ready: Promise<SampleInstance>;
}

/** What the sample prints once it listens (sample/main.ts): the demo reads its URL there. */
const LISTENING = /listening on (http:\/\/\S+?);/;

/**
 * Starts `node sample/main.ts` (through the TypeScript loader) on a free port, ready once it logs where it
 * listens; it exits by itself if its IPC channel closes (the demo died): see instance-link.ts.
 */
export function startInstance(processes: ChildProcesses, settings: InstanceSettings): StartingInstance {
  // the link is preloaded so the instance exits with the demo even while its imports still load
  const child = processes.spawn(process.execPath, ['--import', loader, '--import', link, main], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: {
      ...process.env,
      REDIS_URL: settings.redisUrl,
      PORT: '0',
      INSTANCE_ID: settings.id,
      LOCKS: settings.locks ? 'on' : 'off',
      KEY_PREFIX: settings.keyPrefix,
      NO_COLOR: '1',
    },
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer): void => {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - 30));
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const output = (): string => lines.join('\n');

  const ready = new Promise<SampleInstance>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`Instance ${settings.id} was not ready after 60 s:\n${output()}`));
      void processes.stop(child);
    }, 60_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`Instance ${settings.id} exited (${code ?? signal}) before it was ready:\n${output()}`));
    });
    // what it printed before it listens (a few lines), kept whole: a line may come in two chunks
    let printed = '';
    const listening = (chunk: Buffer): void => {
      printed += chunk.toString();
      const found = LISTENING.exec(printed);
      if (!found) return;
      child.stdout?.off('data', listening);
      clearTimeout(timer);
      resolve({ id: settings.id, url: found[1], process: child, output, stop: () => processes.stop(child) });
    };
    child.stdout?.on('data', listening);
  });
  return { id: settings.id, pid: child.pid, ready };
}
