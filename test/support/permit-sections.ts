import { setTimeout as sleep } from 'node:timers/promises';
import type { PermitShape, PermitStore } from '../../lib/interfaces/permit-store.interface.js';
import { newToken } from '../../lib/utils/token.js';
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
 * count against the shape, stays a few ms, counts itself out and releases.
 */
export async function runSections(plan: SectionsPlan): Promise<SectionsReport> {
  let violations = 0;
  let mostInside = 0;
  let sections = 0;
  const section = async (shape: PermitShape): Promise<void> => {
    const token = newToken();
    await waitForPermit(plan.store, { key: plan.key, token, ttl: 10_000, fencing: true, shape }, 20_000);
    try {
      if ('limit' in shape) {
        const inside = await plan.count('inside', 1);
        if (inside > shape.limit) violations++;
        mostInside = Math.max(mostInside, inside);
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
  const worker = async (): Promise<void> => {
    for (let i = 0; i < plan.sectionsPerWorker; i++) {
      const write = 'readersWriter' in plan.shape && Math.random() < (plan.writeShare ?? 0);
      await section('limit' in plan.shape ? { limit: plan.shape.limit } : { mode: write ? 'write' : 'read' });
    }
  };
  await Promise.all(Array.from({ length: plan.workers }, worker));
  return { sections, violations, mostInside };
}
