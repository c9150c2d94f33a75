import type { LockManager } from '../../lib/core/lock-manager.js';
import type { Lock } from '../../lib/core/lock.js';

/** Turns each of the two workers of {@link takeTurns} takes. */
const TURNS = 4;

/**
 * Two workers of one manager take turns on one key, `TURNS` each: a worker holds until the other asks again
 * and is refused (or is done), releases, and asks again as soon as its release returns. Returns what happened,
 * in order: 'a holds', 'a released', 'b holds', ...
 */
export async function takeTurns(locks: LockManager, acquire: () => Promise<Lock>): Promise<string[]> {
  const order: string[] = [];
  let refusals = 0;
  const stopCounting = locks.on('contended', () => refusals++);
  const done = new Set<string>();
  // the refusals counted when each worker began to ask: a refusal after that is its own (the other holds)
  const askedAt = new Map<string, number>();
  const refused = (name: string): boolean => askedAt.has(name) && refusals > (askedAt.get(name) as number);
  const worker = async (name: string, other: string): Promise<void> => {
    for (let turn = 0; turn < TURNS; turn++) {
      askedAt.set(name, refusals);
      const lock = await acquire();
      askedAt.delete(name);
      order.push(`${name} holds`);
      while (!refused(other) && !done.has(other)) await new Promise((resolve) => setTimeout(resolve, 5));
      await lock.release();
      order.push(`${name} released`);
    }
    done.add(name);
  };
  try {
    await Promise.all([worker('a', 'b'), worker('b', 'a')]);
  } finally {
    stopCounting();
  }
  return order;
}

/**
 * The releases of `order` (from {@link takeTurns}) after which the other worker held the key before the
 * release returned to its worker, against those where it did not; the first `skip` hand-offs and the last
 * release (nobody waits for it) are left out.
 */
export function waiterFirst(order: readonly string[], skip: number): { first: number; after: number } {
  const releases = order.flatMap((entry, index) => (entry.endsWith('released') ? [index] : []));
  let first = 0;
  for (const index of releases.slice(skip, -1)) {
    const releaser = order[index].split(' ')[0];
    if (order[index - 1] === `${releaser === 'a' ? 'b' : 'a'} holds`) first++;
  }
  return { first, after: releases.length - 1 - skip - first };
}
