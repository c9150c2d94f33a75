import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RunReport } from '../../demo/run-report.js';
import { until } from '../sample/start-sample.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** `npm run demo -- ...args` as a child process (its own redis-server unless REDIS_URL is set). */
function startDemo(args: string[]): { demo: ChildProcess; stdout: () => string; stderr: () => string } {
  const demo = spawn(process.execPath, ['--import', './scripts/register-ts.js', 'demo/run-demo.ts', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  demo.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  demo.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { demo, stdout: () => stdout, stderr: () => stderr };
}

function exitOf(demo: ChildProcess): Promise<number | null> {
  if (demo.exitCode !== null) return Promise.resolve(demo.exitCode);
  return new Promise((resolve) => demo.once('exit', (code) => resolve(code)));
}

/** Whether any process of the group `pid` leads (the demo starts each child as a group leader) still runs. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids of the processes the demo says it started (Redis, then each instance as it spawns). */
function startedPids(stderr: string): number[] {
  return [...new Set([...stderr.matchAll(/\(pid (\d+)\)/g)].map((match) => Number(match[1])))];
}

describe('npm run demo', () => {
  it('with the lock: no unit sold twice, a retried purchase run once, one report per tick; without: all of it many times', async () => {
    const { demo, stdout, stderr } = startDemo([
      '--requests',
      '100',
      '--stock',
      '20',
      '--retries',
      '20',
      '--ticks',
      '3',
      '--json',
    ]);
    const code = await exitOf(demo);
    if (code !== 0) throw new Error(`demo exited ${code}:\n${stderr()}\n${stdout()}`);
    const report = JSON.parse(stdout()) as { ok: boolean; locked: RunReport; unlocked: RunReport; pids: number[] };

    expect(report.ok).toBe(true);
    expect(report.locked).toMatchObject({ requests: 100, sold: 20, oversold: 0, stockLeft: 0, overlaps: 0, failed: 0 });
    expect(report.locked.conflicts + report.locked.outOfStock).toBe(80);
    expect(report.locked.handoffMs?.count).toBeGreaterThan(0);
    // one instance per tick; a tick cron skipped on every instance (each timer over 250 ms late) has none
    const runsPerTick = report.locked.reportRuns.map((tick) => tick.instances.length);
    expect(runsPerTick.every((runs) => runs <= 1)).toBe(true);
    expect(runsPerTick).toContain(1);
    // one buyer's purchase, sent 20 times at once with one Idempotency-Key, retried after each 409, then late
    expect(report.locked.retried).toMatchObject({ ran: 1, saleIds: 1, deducted: 1, failed: 0 });
    expect(report.locked.retried.replayed).toBeGreaterThan(0);
    expect(report.locked.retried.attempts).toBeGreaterThanOrEqual(23);
    expect(report.locked.retried.ran + report.locked.retried.conflicts + report.locked.retried.replayed).toBe(
      report.locked.retried.attempts,
    );

    expect(report.unlocked.oversold).toBeGreaterThan(0);
    expect(report.unlocked.overlaps).toBeGreaterThan(0);
    const unlockedRuns = report.unlocked.reportRuns.reduce((sum, tick) => sum + tick.instances.length, 0);
    expect(unlockedRuns).toBeGreaterThan(3);
    // without @Idempotent() every attempt runs and the buyer is told of 23 sales; the stock loses at least one
    // unit to the burst (its writes overlap) and one to each of the 3 late retries, which come one by one
    expect(report.unlocked.retried).toMatchObject({ attempts: 23, ran: 23, saleIds: 23, replayed: 0 });
    expect(report.unlocked.retried.deducted).toBeGreaterThanOrEqual(4);

    // redis-server (unless REDIS_URL was given) and six instances, all gone
    expect(report.pids.length).toBeGreaterThanOrEqual(6);
    expect(report.pids.filter(groupAlive)).toEqual([]);
  }, 120_000);

  // the orderly stop of ready instances is the one every run ends with (checked above); here, the signal
  it('stops every process it started on Ctrl-C (SIGINT), even while its instances still boot, and exits 130', async () => {
    const { demo, stderr } = startDemo(['--requests', '30', '--stock', '10', '--ticks', '60']);
    await until(async () => stderr().includes('starting instances'), 30_000);
    const pids = startedPids(stderr());
    expect(pids).toHaveLength(4);
    expect(pids.every(groupAlive)).toBe(true);
    demo.kill('SIGINT');
    expect(await exitOf(demo)).toBe(130);
    expect(pids.filter(groupAlive)).toEqual([]);
  }, 60_000);

  it('leaves no process behind when it is killed outright (SIGKILL) while its instances still boot', async () => {
    const { demo, stderr } = startDemo(['--requests', '30', '--stock', '10', '--ticks', '60']);
    await until(async () => stderr().includes('starting instances'), 30_000);
    const pids = startedPids(stderr());
    expect(pids).toHaveLength(4);
    demo.kill('SIGKILL');
    await exitOf(demo);
    // Redis goes when its watchdog's stdin closes, each instance when its IPC channel does
    await until(async () => !pids.some(groupAlive), 15_000);
    expect(pids.filter(groupAlive)).toEqual([]);
  }, 60_000);
});
