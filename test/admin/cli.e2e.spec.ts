import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { LockManager } from '../../lib/core/lock-manager.js';
import type { Lock } from '../../lib/core/lock.js';
import type { LockLostError } from '../../lib/errors/lock-lost.error.js';
import type { LockStore } from '../../lib/interfaces/lock-store.interface.js';
import { EtcdLockStore } from '../../lib/stores/etcd/etcd-lock-store.js';
import { PostgresLockStore } from '../../lib/stores/postgres/postgres-lock-store.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import { freePort } from '../support/redis-server.js';
import { etcdKind, postgresKind, testRedisUrl, uniquePrefix } from '../support/stores.js';

const loader = fileURLToPath(new URL('../../scripts/register-ts.js', import.meta.url));
const cli = fileURLToPath(new URL('../../lib/cli/nestjs-lock.ts', import.meta.url));
const hidePackages = fileURLToPath(new URL('../support/hide-packages.mjs', import.meta.url));

type Cli = ChildProcessByStdio<Writable, Readable, Readable>;

/**
 * The CLI (ts-loaded) as a child process, its output gathered as it comes; `hidden` packages cannot be resolved
 * in it, as if they were not installed.
 */
function start(
  args: string[],
  hidden: string[] = [],
): { child: Cli; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', loader, '--import', hidePackages, cli, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, HIDDEN_PACKAGES: hidden.join(',') },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  return { child, output: () => output, exited };
}

/** Runs the CLI to its end: its exit code and output. */
async function run(
  args: string[],
  hidden: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const started = start(args, hidden);
  let stdout = '';
  let stderr = '';
  started.child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  started.child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  started.child.stdin.end();
  return { code: await started.exited, stdout, stderr };
}

/** Waits until `output()` holds `count` frames of `watch` that each match `seen`, for up to 30 s. */
async function frames(output: () => string, seen: (frame: string) => boolean, count = 1): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const matching = output()
      .split(/(?=nestjs-lock watch:)/)
      .filter((frame) => frame.startsWith('nestjs-lock watch:') && seen(frame));
    if (matching.length >= count) return matching;
    if (Date.now() > deadline) throw new Error(`no ${count} such frames in:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The reason a lock's signal aborted with, once it did. */
function lossOf(lock: Lock): Promise<LockLostError> {
  return new Promise((resolve) =>
    lock.signal.addEventListener('abort', () => resolve(lock.signal.reason as LockLostError)),
  );
}

/** A store the CLI connects to by its flags, and the same lock space for the test's own manager. */
interface CliTarget {
  readonly name: string;
  setUp?(): Promise<unknown>;
  tearDown?(): Promise<void>;
  /** The connection flags. */
  flags(): Promise<string[]>;
  store(keyPrefix: string): Promise<LockStore>;
}

const targets: CliTarget[] = [
  {
    name: 'Redis',
    flags: async () => ['--redis', testRedisUrl()],
    store: async (keyPrefix) => new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true }),
  },
  {
    name: 'PostgreSQL',
    setUp: () => postgresKind.server(),
    tearDown: () => postgresKind.stop(),
    flags: async () => ['--postgres', (await postgresKind.server()).url],
    store: async (keyPrefix) =>
      new PostgresLockStore({ connectionString: (await postgresKind.server()).url, keyPrefix }),
  },
  {
    name: 'etcd',
    setUp: () => etcdKind.cluster(),
    tearDown: () => etcdKind.stop(),
    flags: async () => ['--etcd', (await etcdKind.cluster()).hosts.join(',')],
    store: async (keyPrefix) => new EtcdLockStore({ hosts: (await etcdKind.cluster()).hosts, keyPrefix }),
  },
];

describe.each(targets)('the nestjs-lock CLI against $name', (target) => {
  let keyPrefix: string;
  let locks: LockManager;
  let common: string[];

  beforeAll(async () => {
    await target.setUp?.();
  }, 60_000);
  afterAll(async () => {
    await target.tearDown?.();
  });
  beforeEach(async () => {
    keyPrefix = uniquePrefix();
    const store = await target.store(keyPrefix);
    // the Postgres tables exist before the CLI reads them (it never creates them)
    await store.verify?.();
    locks = new LockManager({ store });
    common = [...(await target.flags()), '--key-prefix', keyPrefix];
  });
  afterEach(() => locks.close());

  it('lists, inspects and, only with --force, releases a lock: the holder hears revoked, the next fence is higher', async () => {
    const lock = await locks.acquire('job:nightly', {
      ttl: 3000,
      autoRenew: true,
      label: 'Jobs.nightly',
      fencing: true,
    });
    const lost = lossOf(lock);

    const ls = await run(['ls', '--json', ...common]);
    expect(ls.code).toBe(0);
    const listed = JSON.parse(ls.stdout) as { locks: Array<{ key: string; holders: Array<{ label: string }> }> };
    expect(listed.locks.map((entry) => [entry.key, entry.holders[0].label])).toEqual([['job:nightly', 'Jobs.nightly']]);
    const text = await run(['ls', ...common]);
    expect(text.stdout.split('\t').slice(0, 2)).toEqual(['job:nightly', 'mutex']);

    expect(text.stderr).toBe('');
    const elsewhere = await run(['ls', ...(await target.flags()), '--key-prefix', 'elsewhere:']);
    expect([elsewhere.code, elsewhere.stdout]).toEqual([0, '']);
    expect(elsewhere.stderr).toContain('No lock is held under the key prefix "elsewhere:"; give --key-prefix');

    const inspect = await run(['inspect', 'job:nightly', ...common]);
    expect(inspect.code).toBe(0);
    expect(JSON.parse(inspect.stdout)).toMatchObject({ key: 'job:nightly', kind: 'mutex', fence: lock.fence });
    expect((await run(['inspect', 'job:other', ...common])).code).toBe(3);

    const refused = await run(['release', 'job:nightly', ...common]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--force');
    expect(await locks.isLocked('job:nightly')).toBe(true);

    const released = await run(['release', 'job:nightly', '--force', ...common]);
    expect(released.code).toBe(0);
    const forced = JSON.parse(released.stdout) as { key: string; ended: number; fence: number };
    expect(forced).toMatchObject({ key: 'job:nightly', ended: 1 });
    expect(forced.fence).toBeGreaterThan(lock.fence as number);
    expect((await lost).reason).toBe('revoked');
    const next = await locks.acquire('job:nightly', { ttl: 3000, fencing: true });
    expect(next.fence).toBeGreaterThan(forced.fence);
    await next.release();
    for (const output of [ls, text, inspect, refused, released])
      expect(output.stdout + output.stderr).not.toContain(lock.token);
  }, 60_000);

  it('watch redraws the table with a lock taken after its first frame, and quits on q with exit 0', async () => {
    const first = await locks.acquire('watched:1', { ttl: 30_000, label: 'First.run' });
    const watch = start(['watch', '--interval', '200ms', ...common]);
    try {
      const [frame] = await frames(watch.output, (shown) => shown.includes('watched:1'));
      expect(frame).toContain('First.run');
      expect(frame).not.toContain('watched:2');
      const second = await locks.acquire('watched:2', { ttl: 30_000, label: 'Second.run' });
      const [later] = await frames(watch.output, (shown) => shown.includes('watched:2'));
      expect(later).toContain('watched:1');
      expect(later).toContain('Second.run');
      watch.child.stdin.write('q');
      expect(await watch.exited).toBe(0);
      expect(watch.output()).not.toContain(first.token);
      expect(watch.output()).not.toContain(second.token);
    } finally {
      watch.child.kill('SIGKILL');
    }
  }, 60_000);
});

describe('the nestjs-lock CLI on bad input', () => {
  it('watch ends with exit 0 on SIGINT', async () => {
    const watch = start(['watch', '--redis', testRedisUrl(), '--key-prefix', uniquePrefix(), '--interval', '200ms']);
    try {
      await frames(watch.output, () => true, 2);
      watch.child.kill('SIGINT');
      expect(await watch.exited).toBe(0);
    } finally {
      watch.child.kill('SIGKILL');
    }
  }, 60_000);

  it('refuses two connections, a bad interval and no connection with exit 2, as the module words it', async () => {
    const both = await run(['ls', '--redis', testRedisUrl(), '--postgres', 'postgres://localhost/x']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/not both "redis" and "postgres"/);
    const interval = await run(['watch', '--redis', testRedisUrl(), '--interval', '0']);
    expect(interval.code).toBe(2);
    expect(interval.stderr).toContain('--interval');
    const none = await run(['ls']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--etcd');
    const unknown = await run(['ls', '--bogus']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--bogus[\s\S]*Usage: nestjs-lock/);
  }, 60_000);

  it('prints its usage for --help, with exit 0', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: nestjs-lock <command>/);
  }, 60_000);

  it('reads Redis through node-redis when ioredis is not installed, and says why it cannot reach a server', async () => {
    const keyPrefix = uniquePrefix();
    const locks = new LockManager({
      store: new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true }),
    });
    try {
      await locks.acquire('job:nightly', { ttl: 10_000, label: 'Jobs.nightly' });
      const ls = await run(['ls', '--json', '--redis', testRedisUrl(), '--key-prefix', keyPrefix], ['ioredis']);
      expect({
        code: ls.code,
        stderr: ls.stderr.replace(/^.*(ExperimentalWarning|--trace-warnings).*\n?/gm, ''),
      }).toEqual({
        code: 0,
        stderr: '',
      });
      const listed = JSON.parse(ls.stdout) as { locks: Array<{ key: string }> };
      expect(listed.locks.map((entry) => entry.key)).toEqual(['job:nightly']);
    } finally {
      await locks.close();
    }
    const port = await freePort();
    const down = await run(['ls', '--redis', `redis://:hunter2@127.0.0.1:${port}`], ['ioredis']);
    expect(down.code).toBe(4);
    expect(down.stderr).toContain(`cannot reach Redis at 127.0.0.1:${port}: connection refused (ECONNREFUSED)`);
    expect(down.stderr).not.toContain('hunter2');
  }, 60_000);

  it('exits 4 when the store cannot be reached, naming the server and why as the module does', async () => {
    const port = await freePort();
    const down = await run(['ls', '--redis', `redis://:hunter2@127.0.0.1:${port}`]);
    expect(down.code).toBe(4);
    expect(down.stderr).toContain(`cannot reach Redis at 127.0.0.1:${port}: connection refused (ECONNREFUSED)`);
    expect(down.stderr).not.toContain('max retries');
    expect(down.stderr).not.toContain('hunter2');
  }, 60_000);
});
