import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { LockConfigurationError } from '../../lib/errors/lock-configuration.error.js';
import type {
  PermitGrant,
  PermitMode,
  PermitRequest,
  PermitResult,
  PermitShape,
  PermitStore,
} from '../../lib/interfaces/permit-store.interface.js';
import { permitConflictError } from '../../lib/core/permits/permit-conflict.js';
import { newToken } from '../../lib/utils/token.js';
import { startChild, type ChildHandle } from '../support/child-process.js';
import type { PermitStoreKind, PermitStorePair } from '../support/permit-stores.js';
import { runSections, type SectionsReport } from '../support/permit-sections.js';
import { waitForPermit } from '../support/permit-waiter.js';

const WORKER = fileURLToPath(new URL('./permit-worker.child.ts', import.meta.url));
const HOLDER = JSON.stringify({ host: 'h', pid: 1, label: 'Export.run', acquiredAt: new Date(0).toISOString() });

/** A permit request of `shape` on `key` with a fresh token and a 5 s lease, unless told otherwise. */
function permit(key: string, shape: PermitShape, extra: Partial<PermitRequest> = {}): PermitRequest {
  return { key, token: newToken(), ttl: 5000, fencing: false, shape, ...extra };
}

const read = { mode: 'read' } as const;
const write = { mode: 'write' } as const;

/**
 * The behaviour every PermitStore must show, run against each store kind that keeps permits: memory, one
 * Redis, a Redis Cluster. `processes`: the kind's space is reachable from child processes (Redis).
 */
export function describePermitContract(kind: PermitStoreKind, processes: boolean): void {
  const acrossProcesses = processes ? it : it.skip;

  describe(`${kind.name} permit contract`, () => {
    let pair: PermitStorePair;
    let children: ChildHandle[] = [];
    const extraPairs: PermitStorePair[] = [];

    beforeEach(async () => {
      pair = await kind.create();
    });

    afterEach(async () => {
      await Promise.all(children.map((child) => child.kill()));
      children = [];
      await Promise.all([pair.close(), ...extraPairs.splice(0).map((extra) => extra.close())]);
    });

    /** A pair of its own with another hand-off window, closed after the test. */
    const pairWith = async (handoffWindow: number): Promise<PermitStorePair> => {
      const created = await kind.create({ handoffWindow });
      extraPairs.push(created);
      return created;
    };

    it('grants permits up to the limit and refuses one more, telling when the soonest permit ends', async () => {
      const stores = [pair.store, pair.other];
      const grants = await Promise.all([0, 1, 2].map((i) => stores[i % 2].acquire(permit('quota', { limit: 3 }))));
      expect(grants).toEqual([{ acquired: true }, { acquired: true }, { acquired: true }]);
      const refused = await pair.other.acquire(permit('quota', { limit: 3 }));
      expect(refused).toEqual({ acquired: false, remainingTtl: expect.any(Number) });
      if (!refused.acquired && 'remainingTtl' in refused) {
        expect(refused.remainingTtl).toBeGreaterThan(3000);
        expect(refused.remainingTtl).toBeLessThanOrEqual(5000);
      }
      expect(await pair.other.inspect('quota')).toMatchObject({ held: true, holders: 3, limit: 3, waiting: 0 });
    });

    it('lets exactly the limit of 50 concurrent requests in', async () => {
      const stores = [pair.store, pair.other];
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => stores[i % 2].acquire(permit('race', { limit: 4 }))),
      );
      expect(results.filter((result) => result.acquired)).toHaveLength(4);
    });

    it('never lets more than the limit inside, counted inside each section by workers of one process', async () => {
      const report = await runSections({
        store: pair.store,
        key: 'sections',
        shape: { limit: 3 },
        workers: 9,
        sectionsPerWorker: 15,
        count: pair.count,
      });
      expect(report).toEqual({ sections: 135, violations: 0, mostInside: 3 });
    });

    acrossProcesses(
      'never lets more than the limit inside, counted inside each section across three processes',
      async () => {
        const reports = await runChildren(pair, 'across', { limit: 3 }, 0);
        expect(reports.reduce((sum, report) => sum + report.sections, 0)).toBe(3 * 3 * 20);
        expect(reports.map((report) => report.violations)).toEqual([0, 0, 0]);
        expect(Math.max(...reports.map((report) => report.mostInside))).toBe(3);
      },
      60_000,
    );

    acrossProcesses(
      'lets readers overlap and a writer in alone, counted inside each section across three processes',
      async () => {
        const reports = await runChildren(pair, 'rw-across', { readersWriter: true }, 0.2);
        expect(reports.reduce((sum, report) => sum + report.sections, 0)).toBe(3 * 3 * 20);
        expect(reports.map((report) => report.violations)).toEqual([0, 0, 0]);
        expect(Math.max(...reports.map((report) => report.mostInside))).toBeGreaterThan(1);
      },
      60_000,
    );

    it('never lets a mutex lease in beside permits, nor a permit beside one, counted inside each section', async () => {
      const report = await runSections({
        store: pair.store,
        key: 'mixed-sections',
        shape: { limit: 3 },
        workers: 6,
        sectionsPerWorker: 15,
        count: pair.count,
        mutex: { store: pair.mutex, share: 0.25 },
      });
      expect(report).toMatchObject({ sections: 90, violations: 0 });
    });

    acrossProcesses(
      'never lets a mutex lease in beside permits, nor a permit beside one, across three processes',
      async () => {
        const reports = await runChildren(pair, 'mixed-across', { limit: 3 }, 0, 0.25);
        expect(reports.reduce((sum, report) => sum + report.sections, 0)).toBe(3 * 3 * 20);
        expect(reports.map((report) => report.violations)).toEqual([0, 0, 0]);
      },
      60_000,
    );

    it('refuses a mutex lease while a permit lives, telling when the last permit ends', async () => {
      const short = permit('guarded', { limit: 2 }, { ttl: 1000 });
      const long = permit('guarded', { limit: 2 }, { ttl: 4000 });
      await pair.store.acquire(short);
      await pair.other.acquire(long);
      const token = newToken();
      const refused = await pair.mutex.acquire({ key: 'guarded', token, ttl: 5000, fencing: false });
      expect(refused).toEqual({ acquired: false, remainingTtl: expect.any(Number) });
      if (!refused.acquired) expect(refused.remainingTtl).toBeGreaterThan(2000);
      // fenced (the script, not the plain SET NX) refuses it too
      expect(await pair.mutex.acquire({ key: 'guarded', token, ttl: 5000, fencing: true })).toMatchObject({
        acquired: false,
      });
      await pair.store.release('guarded', short.token);
      expect(await pair.mutex.acquire({ key: 'guarded', token, ttl: 5000, fencing: false })).toMatchObject({
        acquired: false,
      });
      await pair.other.release('guarded', long.token);
      expect(await pair.mutex.acquire({ key: 'guarded', token, ttl: 5000, fencing: false })).toEqual({
        acquired: true,
      });
      expect(await pair.store.acquire(permit('guarded', { limit: 2 }))).toMatchObject({ acquired: false });
      await pair.mutex.release('guarded', token);
    });

    it('lets a waiting mutex caller hold new permits back, and calls it when the last permit ends', async () => {
      const holder = permit('claimed', read);
      await pair.store.acquire(holder);
      const token = newToken();
      const watch = await pair.mutex.watch('claimed');
      try {
        const waiting = { again: false, ttl: 5000 };
        expect(await pair.mutex.acquire({ key: 'claimed', token, ttl: 5000, fencing: false, waiting })).toMatchObject({
          acquired: false,
        });
        // readers keep coming: none of them overtakes the waiting mutex
        expect(await pair.other.acquire(permit('claimed', read))).toMatchObject({ acquired: false });
        await pair.store.release('claimed', holder.token);
        expect(await watch.next(3000)).toBe(true);
        const again = { again: true, ttl: 5000 };
        expect(await pair.mutex.acquire({ key: 'claimed', token, ttl: 5000, fencing: false, waiting: again })).toEqual({
          acquired: true,
        });
      } finally {
        watch.close();
      }
      await pair.mutex.release('claimed', token);
      expect(await pair.other.acquire(permit('claimed', read))).toEqual({ acquired: true });
    });

    /** Runs three child processes of three workers with twenty sections each on `key`, started together. */
    async function runChildren(
      on: PermitStorePair,
      key: string,
      shape: { limit: number } | { readersWriter: true },
      writeShare: number,
      mutexShare = 0,
    ): Promise<SectionsReport[]> {
      const env = {
        ...on.space,
        ROLE: 'sections',
        KEY: key,
        SHAPE: JSON.stringify(shape),
        WRITE_SHARE: String(writeShare),
        ...(mutexShare > 0 ? { MUTEX_SHARE: String(mutexShare) } : {}),
        WORKERS: '3',
        SECTIONS: '20',
      } as Record<string, string>;
      const started = [0, 1, 2].map(() => startChild(WORKER, env));
      children.push(...started);
      await Promise.all(started.map((child) => child.waitFor('ready')));
      for (const child of started) child.send('go');
      await Promise.all(started.map((child) => child.waitFor('done', 50_000)));
      return started.map((child) => JSON.parse(/done (.*)/.exec(child.output())![1]) as SectionsReport);
    }

    acrossProcesses('frees the permits of a SIGKILLed holder by their TTL', async () => {
      const ttl = 1500;
      const child = startChild(WORKER, {
        ...(pair.space as unknown as Record<string, string>),
        ROLE: 'hold',
        KEY: 'crashed',
        SHAPE: JSON.stringify({ limit: 2 }),
        COUNT: '2',
        TTL: String(ttl),
      });
      children.push(child);
      await child.waitFor('held');
      await child.kill();
      const killedAt = performance.now();
      // the permits end by their TTL on the server; a waiter here may only notice as late as this process runs
      const lag = monitorEventLoopDelay({ resolution: 10 });
      lag.enable();
      expect(await pair.store.acquire(permit('crashed', { limit: 2 }))).toMatchObject({ acquired: false });
      const grants = await Promise.all(
        [pair.store, pair.other].map((store) => waitForPermit(store, permit('crashed', { limit: 2 }), 5000)),
      );
      expect(grants.every((grant) => grant.acquired)).toBe(true);
      lag.disable();
      expect(performance.now() - killedAt).toBeLessThan(ttl + 1000 + lag.max / 1e6);
      expect(await pair.other.inspect('crashed')).toMatchObject({ holders: 2, limit: 2 });
    });

    it('frees the permit of a holder that never releases within its TTL, and a waiter gets it', async () => {
      const ttl = 300;
      // the waiter's subscriber is connected before the clock starts: what is timed is how soon it sees the end
      (await pair.other.watch('forgotten')).close();
      await pair.store.acquire(permit('forgotten', { limit: 1 }, { ttl }));
      const started = performance.now();
      // the waiter may only notice as late as this process runs (a loaded machine held it up 1 s in a CI run)
      const lag = monitorEventLoopDelay({ resolution: 10 });
      lag.enable();
      const grant = await waitForPermit(pair.other, permit('forgotten', { limit: 1 }), 5000);
      lag.disable();
      expect(grant.acquired).toBe(true);
      expect(performance.now() - started).toBeLessThan(ttl + 800 + lag.max / 1e6);
    });

    it("lets a stale token neither release nor extend another's permit", async () => {
      const first = permit('stale', { limit: 2 });
      const second = permit('stale', { limit: 2 });
      await pair.store.acquire(first);
      await pair.other.acquire(second);
      expect(await pair.other.release('stale', newToken())).toBe(false);
      expect(await pair.other.extend('stale', newToken(), 60_000)).toBe(false);
      expect(await pair.store.release('stale', first.token)).toBe(true);
      expect(await pair.store.release('stale', first.token)).toBe(false);
      expect(await pair.store.extend('stale', first.token, 60_000)).toBe(false);
      const state = await pair.other.inspect('stale');
      expect(state).toMatchObject({ held: true, holders: 1 });
      expect(state.permits[0].remainingTtl).toBeLessThanOrEqual(5000);
      expect(await pair.other.release('stale', second.token)).toBe(true);
      expect(await pair.other.inspect('stale')).toMatchObject({ held: false, holders: 0 });
    });

    it('extends only a live permit and never brings back an ended one', async () => {
      const short = permit('extend', { limit: 2 }, { ttl: 150 });
      const long = permit('extend', { limit: 2 }, { ttl: 1000 });
      await pair.store.acquire(short);
      await pair.store.acquire(long);
      expect(await pair.store.extend('extend', long.token, 8000)).toBe(true);
      await sleep(300);
      expect(await pair.store.extend('extend', short.token, 8000)).toBe(false);
      const state = await pair.other.inspect('extend');
      expect(state.holders).toBe(1);
      expect(state.permits[0].remainingTtl).toBeGreaterThan(5000);
    });

    it('renews a batch permit by permit: live ones extended, stale and ended ones not', async () => {
      const live = [permit('batch:a', { limit: 2 }, { ttl: 1000 }), permit('batch:b', read, { ttl: 1000 })];
      for (const request of live) await pair.store.acquire(request);
      const outcomes = await pair.store.extendMany([
        { key: 'batch:a', token: live[0].token, ttl: 8000 },
        { key: 'batch:a', token: newToken(), ttl: 8000 },
        { key: 'batch:b', token: live[1].token, ttl: 8000 },
        { key: 'batch:missing', token: newToken(), ttl: 8000 },
      ]);
      expect(outcomes).toEqual([true, false, true, false]);
      for (const key of ['batch:a', 'batch:b']) {
        expect((await pair.other.inspect(key)).permits[0].remainingTtl).toBeGreaterThan(5000);
      }
    });

    it('grants a retry of the same token its permit again, with the same fence, not a second permit', async () => {
      const request = permit('retry', { limit: 2 }, { fencing: true });
      const first = await pair.store.acquire(request);
      const retry = await pair.store.acquire(request);
      expect(retry).toEqual(first);
      expect((await pair.other.inspect('retry')).holders).toBe(1);
    });

    it('grants fences that strictly increase across all permits of a resource and its mutex leases', async () => {
      const fences: number[] = [];
      const fenceOf = (result: PermitResult): number => (result.acquired ? result.fence! : -1);
      const held: Array<{ store: PermitStore; token: string }> = [];
      for (let i = 0; i < 6; i++) {
        const store = i % 2 === 0 ? pair.store : pair.other;
        const request = permit('fenced', { limit: 3 }, { fencing: true });
        fences.push(fenceOf(await store.acquire(request)));
        held.push({ store, token: request.token });
        // keep up to three permits at once: fences grow across live permits, not only one after another
        if (held.length === 3) {
          const oldest = held.shift()!;
          await oldest.store.release('fenced', oldest.token);
        }
      }
      for (const { store, token } of held) await store.release('fenced', token);
      const mutexToken = newToken();
      const lease = await pair.mutex.acquire({ key: 'fenced', token: mutexToken, ttl: 5000, fencing: true });
      fences.push(lease.acquired ? lease.fence! : -1);
      await pair.mutex.release('fenced', mutexToken);
      fences.push(fenceOf(await pair.store.acquire(permit('fenced', { limit: 3 }, { fencing: true }))));
      for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
      expect((await pair.other.inspect('fenced')).fence).toBe(fences.at(-1));
    });

    it('grants fences above a counter ahead of the clock, and above earlier fences after the counter went back', async () => {
      const ahead = Date.now() * 1000 + 1e9;
      await pair.setFence('counter', ahead);
      const grants = [await pair.store.acquire(permit('counter', read, { fencing: true }))];
      grants.push(await pair.other.acquire(permit('counter', read, { fencing: true })));
      expect(grants).toEqual([
        { acquired: true, fence: ahead + 1 },
        { acquired: true, fence: ahead + 2 },
      ]);
      await pair.setFence('rewound', 1);
      const first = await pair.store.acquire(permit('rewound', { limit: 2 }, { fencing: true }));
      await pair.setFence('rewound', 1);
      const second = await pair.other.acquire(permit('rewound', { limit: 2 }, { fencing: true }));
      expect(first.acquired && second.acquired && second.fence! > first.fence!).toBe(true);
    });

    it('refuses a caller that disagrees on the limit while a permit lasts, and takes a new one once the key is quiet', async () => {
      const first = permit('shape', { limit: 3 });
      await pair.store.acquire(first);
      expect(await pair.other.acquire(permit('shape', { limit: 5 }))).toEqual({ acquired: false, inUseAs: 3 });
      expect(await pair.other.acquire(permit('shape', read))).toEqual({ acquired: false, inUseAs: 3 });
      expect(await pair.store.release('shape', first.token)).toBe(true);
      const rw = permit('shape', write);
      expect(await pair.other.acquire(rw)).toEqual({ acquired: true });
      expect(await pair.store.acquire(permit('shape', { limit: 3 }))).toEqual({
        acquired: false,
        inUseAs: 'read-write',
      });
      const error = permitConflictError({ limit: 5 }, 3, '@WithLock(Export.run)');
      expect(error).toBeInstanceOf(LockConfigurationError);
      expect(error.option).toBe('@WithLock(Export.run).limit');
      expect(error.message).toContain('in use as a semaphore with limit 3');
    });

    it('keeps the limit with the key while a waiter stands in line, after every permit ended', async () => {
      const holder = permit('waited', { limit: 1 });
      await pair.store.acquire(holder);
      const waiter = permit('waited', { limit: 1 }, { waiting: { ttl: 5000 } });
      expect(await pair.other.acquire(waiter)).toMatchObject({ acquired: false, ahead: 0 });
      await pair.store.release('waited', holder.token);
      expect(await pair.store.acquire(permit('waited', { limit: 2 }))).toEqual({ acquired: false, inUseAs: 1 });
      await pair.other.leaveLine('waited', waiter.token);
      expect(await pair.store.acquire(permit('waited', { limit: 2 }))).toEqual({ acquired: true });
    });

    it('lets readers overlap, and shows their count, mode and holder records but never a token', async () => {
      const readers = [0, 1, 2, 3].map(() => permit('prices', read, { holder: HOLDER, fencing: true }));
      const grants = await Promise.all(readers.map((request, i) => (i % 2 ? pair.other : pair.store).acquire(request)));
      expect(grants.every((grant) => grant.acquired)).toBe(true);
      const state = await pair.other.inspect('prices');
      expect(state).toMatchObject({ held: true, holders: 4, mode: 'read', waiting: 0 });
      expect(state.limit).toBeUndefined();
      expect(state.permits).toHaveLength(4);
      for (const held of state.permits) {
        expect(held).toEqual({
          mode: 'read',
          remainingTtl: expect.any(Number),
          fence: expect.any(Number),
          holder: HOLDER,
        });
      }
      const text = JSON.stringify(state);
      for (const request of readers) expect(text).not.toContain(request.token);
    });

    it('lets a writer in alone: it excludes readers and writers, and readers exclude it', async () => {
      const writer = permit('doc', write, { holder: HOLDER });
      expect(await pair.store.acquire(writer)).toEqual({ acquired: true });
      expect(await pair.other.acquire(permit('doc', read))).toMatchObject({ acquired: false });
      expect(await pair.other.acquire(permit('doc', write))).toMatchObject({ acquired: false });
      expect(await pair.other.inspect('doc')).toMatchObject({
        holders: 1,
        mode: 'write',
        permits: [{ mode: 'write', holder: HOLDER }],
      });
      await pair.store.release('doc', writer.token);
      const reader = permit('doc', read);
      expect(await pair.other.acquire(reader)).toEqual({ acquired: true });
      expect(await pair.store.acquire(permit('doc', write))).toMatchObject({ acquired: false });
    });

    it('grants no permit beside a mutex lease of the same key, and tells when that lease ends', async () => {
      const token = newToken();
      await pair.mutex.acquire({ key: 'mixed', token, ttl: 3000, fencing: false });
      const refused = await pair.store.acquire(permit('mixed', read));
      expect(refused).toMatchObject({ acquired: false });
      if (!refused.acquired && 'remainingTtl' in refused) {
        expect(refused.remainingTtl).toBeGreaterThan(2000);
        expect(refused.remainingTtl).toBeLessThanOrEqual(3000);
      }
      await pair.mutex.release('mixed', token);
      expect(await pair.store.acquire(permit('mixed', read))).toEqual({ acquired: true });
    });

    it('gives a freed permit to the first in line, across processes, and tells its process', async () => {
      // a window no stall of this process outlasts: the test is about the order, not how long a place is kept
      const { store, other } = await pairWith(2000);
      const holder = permit('line', { limit: 1 });
      await store.acquire(holder);
      const first = permit('line', { limit: 1 }, { waiting: { ttl: 5000 } });
      const second = permit('line', { limit: 1 }, { waiting: { ttl: 5000 } });
      const watch = await other.watch('line');
      expect(await other.acquire(first)).toMatchObject({ acquired: false, ahead: 0 });
      expect(await store.acquire(second)).toMatchObject({ acquired: false, ahead: 1 });
      expect(await store.release('line', holder.token)).toBe(true);
      expect(await watch.next(2000)).toBe(true);
      watch.close();
      // the freed permit is the first's: neither a newcomer nor the second takes it
      expect(await store.acquire(permit('line', { limit: 1 }))).toMatchObject({ acquired: false });
      expect(await store.acquire(second)).toMatchObject({ acquired: false, ahead: 1 });
      expect(await other.acquire(first)).toEqual({ acquired: true });
      expect(await other.inspect('line')).toMatchObject({ holders: 1, waiting: 1 });
    });

    it('lets a waiter reserved a permit but never back cost the others only its hand-off window', async () => {
      const window = 300;
      const wide = await pairWith(window);
      const holder = permit('gone', { limit: 1 });
      await wide.store.acquire(holder);
      const gone = permit('gone', { limit: 1 }, { waiting: { ttl: 10_000 } });
      const next = permit('gone', { limit: 1 }, { waiting: { ttl: 10_000 } });
      await wide.other.acquire(gone);
      await wide.store.acquire(next);
      await wide.store.release('gone', holder.token);
      const releasedAt = performance.now();
      const refused = await wide.store.acquire(next);
      expect(refused).toMatchObject({ acquired: false });
      if (!refused.acquired && 'remainingTtl' in refused) expect(refused.remainingTtl).toBeLessThanOrEqual(window);
      expect(await waitForPermit(wide.store, next, 5000)).toEqual({ acquired: true });
      expect(performance.now() - releasedAt).toBeLessThan(window + 700);
      // back late, the gone waiter keeps its turn before later arrivals
      const later = permit('gone', { limit: 1 }, { waiting: { ttl: 10_000 } });
      expect(await wide.other.acquire(gone)).toMatchObject({ acquired: false, ahead: 0 });
      expect(await wide.store.acquire(later)).toMatchObject({ acquired: false, ahead: 1 });
      await wide.store.release('gone', next.token);
      expect(await wide.store.acquire(later)).toMatchObject({ acquired: false });
      expect(await wide.other.acquire(gone)).toEqual({ acquired: true });
    });

    it("keeps the other waiters' turns of a process whose one waiter never claims its reservation", async () => {
      const window = 300;
      const wide = await pairWith(window);
      const holder = permit('late', { limit: 1 });
      await wide.store.acquire(holder);
      const late = permit('late', { limit: 1 }, { waiting: { ttl: 10_000 } });
      const patient = permit('late', { limit: 1 }, { waiting: { ttl: 10_000 } });
      const behind = permit('late', { limit: 1 }, { waiting: { ttl: 10_000 } });
      expect(await wide.other.acquire(late)).toMatchObject({ acquired: false, ahead: 0 });
      expect(await wide.other.acquire(patient)).toMatchObject({ acquired: false, ahead: 1 });
      expect(await wide.store.acquire(behind)).toMatchObject({ acquired: false, ahead: 2 });
      await wide.store.release('late', holder.token);
      // the permit is reserved for `late`, which never comes; its process asks for `patient` meanwhile: alive
      expect(await wide.other.acquire(patient)).toMatchObject({ acquired: false, ahead: 1 });
      const lapsed = performance.now() + 5000;
      while ((await wide.store.inspect('late')).waiting !== 2) {
        if (performance.now() > lapsed) throw new Error("late's reservation did not lapse");
        await sleep(window / 10);
      }
      // only `late` is passed over: `patient` keeps its turn before `behind`
      expect(await wide.store.acquire(behind)).toMatchObject({ acquired: false, ahead: 1 });
      expect(await wide.other.acquire(patient)).toEqual({ acquired: true });
    });

    it('lets the places a leaving waiter held back in at once', async () => {
      const reader = permit('leave', read);
      await pair.store.acquire(reader);
      const writer = permit('leave', write, { waiting: { ttl: 5000 } });
      const behind = permit('leave', read, { waiting: { ttl: 5000 } });
      expect(await pair.other.acquire(writer)).toMatchObject({ acquired: false, ahead: 0 });
      // a waiting writer holds back readers that come after it, though readers hold the key
      expect(await pair.store.acquire(behind)).toMatchObject({ acquired: false, ahead: 1 });
      await pair.other.leaveLine('leave', writer.token);
      expect(await pair.store.acquire(behind)).toEqual({ acquired: true });
      expect(await pair.other.inspect('leave')).toMatchObject({ holders: 2, mode: 'read', waiting: 0 });
    });

    it('serves a waiting writer under a steady stream of readers, and no reader that came after it goes first', async () => {
      // the rule holds while the writer claims its reservation within the window: give it one no stall outlasts
      const wide = await pairWith(2000);
      const stream = streamOf(wide, 'stream', read, 4);
      await stream.started;
      let joinedAt: number | undefined;
      let started: number;
      let grant: PermitGrant;
      let grantedAt: number;
      // a starved machine leaves gaps in the stream: a writer that found no reader holding never stood in line
      // and tells nothing of the rule, so it asks again (a stream that never holds fails below)
      for (let tries = 1; ; tries++) {
        const writer = permit('stream', write);
        started = performance.now();
        grant = await waitForPermit(wide.other, writer, 10_000, () => (joinedAt ??= performance.now()));
        grantedAt = performance.now();
        await sleep(20);
        await wide.other.release('stream', writer.token);
        if (joinedAt !== undefined || tries === 5) break;
      }
      const entries = await stream.stop();
      expect(grant.acquired).toBe(true);
      expect(joinedAt).toBeDefined();
      expect(grantedAt - started).toBeLessThan(3000);
      // a reader that asked once the writer stood in line entered after it
      const overtook = entries.filter((entry) => entry.askedAt > joinedAt! && entry.enteredAt < grantedAt);
      expect(overtook).toEqual([]);
      expect(entries.filter((entry) => entry.enteredAt > grantedAt).length).toBeGreaterThan(0);
    });

    it('does not starve a waiting reader under a steady stream of writers', async () => {
      const wide = await pairWith(2000);
      const stream = streamOf(wide, 'writers', write, 3);
      await stream.started;
      const reader = permit('writers', read);
      let joinedAt: number | undefined;
      const started = performance.now();
      const grant = await waitForPermit(wide.other, reader, 10_000, () => (joinedAt ??= performance.now()));
      const grantedAt = performance.now();
      await wide.other.release('writers', reader.token);
      const entries = await stream.stop();
      expect(grant.acquired).toBe(true);
      expect(grantedAt - started).toBeLessThan(3000);
      const overtook = entries.filter(
        (entry) => joinedAt !== undefined && entry.askedAt > joinedAt && entry.enteredAt < grantedAt,
      );
      expect(overtook).toEqual([]);
    });

    it.each(['{', 'a}b{c', 'ключ:🔒', 'with space'])('keeps the permits of the key %j to that key', async (key) => {
      const request = permit(key, { limit: 1 });
      expect(await pair.store.acquire(request)).toEqual({ acquired: true });
      expect(await pair.other.acquire(permit(key, { limit: 1 }))).toMatchObject({ acquired: false });
      expect((await pair.other.inspect(`${key}x`)).held).toBe(false);
      expect(await pair.store.release(key, request.token)).toBe(true);
    });
  });
}

/** When a section of a stream was asked for and entered, by the clock of this process. */
interface StreamEntry {
  readonly askedAt: number;
  readonly enteredAt: number;
}

/**
 * `workers` workers that take permits of `mode` on `key` one after another, alternating between the two stores
 * of the pair, each holding it 15 ms, until stopped: a steady stream of holders.
 */
function streamOf(
  pair: PermitStorePair,
  key: string,
  shape: { readonly mode: PermitMode },
  workers: number,
): { started: Promise<void>; stop(): Promise<StreamEntry[]> } {
  const entries: StreamEntry[] = [];
  let stopped = false;
  let firstEntered: () => void;
  const started = new Promise<void>((resolve) => (firstEntered = resolve));
  const worker = async (index: number): Promise<void> => {
    const store = index % 2 === 0 ? pair.store : pair.other;
    while (!stopped) {
      const request = permit(key, shape);
      const askedAt = performance.now();
      await waitForPermit(store, request, 10_000);
      entries.push({ askedAt, enteredAt: performance.now() });
      firstEntered();
      await sleep(15);
      await store.release(key, request.token);
    }
  };
  const running = Promise.all(Array.from({ length: workers }, (_, index) => worker(index)));
  return {
    started,
    async stop() {
      stopped = true;
      await running;
      return entries;
    },
  };
}
