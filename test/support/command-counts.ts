import type { Redis } from 'ioredis';

/** How often the server ran each command so far, from `INFO commandstats` (commands inside scripts included). */
export async function commandCalls(admin: Redis): Promise<Map<string, number>> {
  const stats = new Map<string, number>();
  for (const [, name, calls] of (await admin.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    stats.set(name, Number(calls));
  }
  return stats;
}

/** The commands a server of its own ran during `action` (without the INFO that took the first count). */
export async function commandsDuring(admin: Redis, action: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = await commandCalls(admin);
  await action();
  const after = await commandCalls(admin);
  const delta: Record<string, number> = {};
  for (const [name, calls] of after) {
    if (calls !== (before.get(name) ?? 0)) delta[name] = calls - (before.get(name) ?? 0);
  }
  delta.info -= 1;
  if (delta.info === 0) delete delta.info;
  return delta;
}

/** The sum of the counts of {@link commandsDuring}. */
export function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((sum, calls) => sum + calls, 0);
}
