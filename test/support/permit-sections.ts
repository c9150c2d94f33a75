import { setTimeout as sleep } from 'node:timers/promises';
import type { PermitShape, PermitStore } from '../../lib/interfaces/permit-store.interface.js';
import { newToken } from '../../lib/utils/token.js';
import type { LockStore } from '../../lib/interfaces/lock-store.interface.js';
import { waitForMutex } from './mutex-waiter.js';
import { waitForPermit } from './permit-waiter.js';

/** A run of locked sections by workers that contend for one key's permits. */
export interface SectionsPlan {
  readonly store: PermitStore;
  readonly key: string;
  /** A semaphore's limit, or a readers-writer lock (`mode` is then drawn per section). */
  readonly shape: { readonly limit: number } | { readonly readersWriter: true };
  /** For a readers-writer lock: the share of sections that write. */
  readonly writeShare?: number;
  readonly workers: number;
  readonly sectionsPerWorker: number;
  /** Counts in a place every process of the test sees; returns the count after. */
  readonly count: (name: string, by: number) => Promise<number>;
  /** Mutex sections on the same key, of the lock store beside the permits: this share of the sections. */
  readonly mutex?: { readonly store: LockStore; readonly share: number };
}

/** What the sections saw of each other, counted inside each section. */
export interface SectionsReport {
  readonly sections: number;
  /** Sections that saw more holders inside than the shape allows. */
  readonly violations: number;
  /** The most holders (semaphore) or readers (readers-writer) seen inside at once. */
  readonly mostInside: number;
}

/**
 * Runs the plan: each worker takes a permit (waiting in the line), counts itself in on entry, checks the
 * count against the shape, stays a few ms, counts itself out and releases. With `mutex`, some sections take
 * a mutex lease of the key instead, and every section checks that the other kind is not inside.
 */
export async function runSections(plan: SectionsPlan): Promise<SectionsReport> {
  let violations = 0;
  let mostInside = 0;
  let sections = 0;
  const mutexSection = async (store: LockStore): Promise<void> => {
    const token = newToken();
    await waitForMutex(store, { key: plan.key, token, ttl: 10_000, fencing: true }, 20_000);
    try {
      const holders = await Promise.all(['inside', 'readers', 'writers'].map((name) => plan.count(name, 0)));
      if ((await plan.count('mutex', 1)) > 1 || holders.some((count) => count > 0)) violations++;
      await sleep(1 + Math.random() * 3);
      await plan.count('mutex', -1);
      sections++;
    } finally {
      await store.release(plan.key, token);
    }
  };
  const section = async (shape: PermitShape, direct: boolean): Promise<void> => {
    const token = newToken();
    const request = { key: plan.key, token, ttl: 10_000, fencing: true, shape };
    await waitForPermit(plan.store, request, 20_000, undefined, direct);
    try {
      if (plan.mutex && (await plan.count('mutex', 0)) > 0) violations++;
      if ('limit' in shape) {
        const inside = await plan.count('inside', 1);
        if (inside > shape.limit) violations++;
        mostInside = Math.max(mostInside, inside);
        // until the limit has been seen inside once, a section stays a while for the others to come in: on a
        // loaded machine a grant can take longer than a few-ms section, and the limit would never be met at once
        for (let waited = 0; mostInside < shape.limit && waited < 300; waited += 5) {
          await sleep(5);
          const now = await plan.count('inside', 0);
          if (now > shape.limit) violations++;
          mostInside = Math.max(mostInside, now);
        }
      } else if (shape.mode === 'read') {
        const readers = await plan.count('readers', 1);
        if ((await plan.count('writers', 0)) > 0) violations++;
        mostInside = Math.max(mostInside, readers);
      } else {
        const writers = await plan.count('writers', 1);
        if (writers > 1 || (await plan.count('readers', 0)) > 0) violations++;
      }
      await sleep(1 + Math.random() * 3);
      const name = 'limit' in shape ? 'inside' : shape.mode === 'read' ? 'readers' : 'writers';
      await plan.count(name, -1);
      sections++;
    } finally {
      await plan.store.release(plan.key, token);
    }
  };
  // every other worker waits as the engine does (a release may grant it its permit directly), the others
  // claim what a release reserved for them: both kinds of places in one line
  const worker = async (direct: boolean): Promise<void> => {
    for (let i = 0; i < plan.sectionsPerWorker; i++) {
      if (plan.mutex && Math.random() < plan.mutex.share) {
        await mutexSection(plan.mutex.store);
        continue;
      }
      const write = 'readersWriter' in plan.shape && Math.random() < (plan.writeShare ?? 0);
      await section('limit' in plan.shape ? { limit: plan.shape.limit } : { mode: write ? 'write' : 'read' }, direct);
    }
  };
  await Promise.all(Array.from({ length: plan.workers }, (_, index) => worker(index % 2 === 0)));
  return { sections, violations, mostInside };
}
