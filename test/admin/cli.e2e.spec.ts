import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { LockManager } from '../../lib/core/lock-manager.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

const loader = fileURLToPath(new URL('../../scripts/register-ts.js', import.meta.url));
const cli = fileURLToPath(new URL('../../lib/cli/nestjs-lock.ts', import.meta.url));

/** Runs the CLI (ts-loaded) to its end: its exit code and output. */
function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', loader, cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the nestjs-lock CLI against real Redis', () => {
  const keyPrefix = uniquePrefix();
  let locks: LockManager;

  beforeAll(() => {
    locks = new LockManager({
      store: new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true }),
    });
  });
  afterAll(() => locks.close());

  it('lists, inspects and, only with --force, releases a lock; no token in any output', async () => {
    const lock = await locks.acquire('job:nightly', { ttl: 60_000, label: 'Jobs.nightly', fencing: true });
    const common = ['--redis', testRedisUrl(), '--key-prefix', keyPrefix];

    const ls = await run(['ls', '--json', ...common]);
    expect(ls.code).toBe(0);
    const listed = JSON.parse(ls.stdout) as { locks: Array<{ key: string; holders: Array<{ label: string }> }> };
    expect(listed.locks.map((entry) => [entry.key, entry.holders[0].label])).toEqual([['job:nightly', 'Jobs.nightly']]);

    const inspect = await run(['inspect', 'job:nightly', ...common]);
    expect(inspect.code).toBe(0);
    expect(JSON.parse(inspect.stdout)).toMatchObject({ key: 'job:nightly', kind: 'mutex' });
    expect((await run(['inspect', 'job:other', ...common])).code).toBe(3);

    const refused = await run(['release', 'job:nightly', ...common]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--force');
    expect(await locks.isLocked('job:nightly')).toBe(true);

    const released = await run(['release', 'job:nightly', '--force', ...common]);
    expect(released.code).toBe(0);
    expect(JSON.parse(released.stdout)).toMatchObject({ key: 'job:nightly', ended: 1 });
    expect(await locks.isLocked('job:nightly')).toBe(false);
    for (const output of [ls, inspect, refused, released])
      expect(output.stdout + output.stderr).not.toContain(lock.token);
  }, 60_000);
});
