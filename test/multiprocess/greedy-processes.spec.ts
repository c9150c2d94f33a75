import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { startChild, type ChildHandle } from '../support/child-process.js';
import { useProcessRoom } from '../support/process-room.js';
import { testRedisUrl } from '../support/stores.js';

const worker = fileURLToPath(new URL('./greedy-worker.ts', import.meta.url));
const KEY = 'greedy';
const PROCESSES = 8;
const SECTIONS = 40;

describe('8 greedy processes on one key, handing it over through the line in Redis', () => {
  const room = useProcessRoom();
  const { children } = room;

  function start(env: Record<string, string> = {}): ChildHandle {
    const child = startChild(worker, {
      REDIS_URL: testRedisUrl(),
      KEY_PREFIX: room.prefix,
      KEY,
      SECTIONS: String(SECTIONS),
      ...env,
    });
    children.push(child);
    return child;
  }

  it('lets one holder in at a time with fences that only grow, serves every process, and passes over a dead waiter', async () => {
    const workers = Array.from({ length: PROCESSES }, () => start());
    await Promise.all(workers.map((child) => child.waitFor('ready', 30_000)));
    // a process that stands in the line, then dies there: the others must not wait a ttl for it
    const doomed = start({ WAIT_ONLY: '1' });
    const holder = await room.admin.set(resourceKeys(room.prefix, KEY).lock, 'held-by-the-test', 'PX', 60_000);
    expect(holder).toBe('OK');
    await doomed.waitFor('asked', 30_000);
    const line = resourceKeys(room.prefix, KEY).line;
    while ((await room.admin.llen(line)) === 0) await sleep(5);
    await doomed.kill();
    await room.admin.del(resourceKeys(room.prefix, KEY).lock);

    for (const child of workers) child.send('go');
    await Promise.all(workers.map((child) => child.waitFor('done', 60_000)));
    const reports = workers.map((child) => {
      const [, sections, violations, ends] = /done (\d+) (\d+) ([\d,]+)/.exec(child.output()) ?? [];
      return { sections: Number(sections), violations: Number(violations), ends: ends.split(',').map(Number) };
    });
    expect(reports.map((report) => report.violations)).toEqual(workers.map(() => 0));
    expect(reports.map((report) => report.sections)).toEqual(workers.map(() => SECTIONS));
    // every section ends soon after the one before it: a grant to the dead waiter, left to its ttl (10 s), would
    // stop everyone that long
    const ends = reports.flatMap((report) => report.ends).sort((a, b) => a - b);
    const longestPause = Math.max(...ends.slice(1).map((end, i) => end - ends[i]));
    expect(longestPause).toBeLessThan(5000);
  }, 90_000);
});
