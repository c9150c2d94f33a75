import { performance } from 'node:perf_hooks';
import type { RedisClientPort } from '../redis/client/redis-client-port.js';
import type { ResourceKeys } from '../redis/resource-keys.js';
import { readStoredLease } from '../redis/lease-value.js';
import { sendToAll } from './quorum-round.js';
import { runScriptBatch, type ScriptCall } from '../redis/script-runner.js';
import { REGRANT } from '../redis/scripts/regrant.script.js';

/** A lease that a renewal round extended on a quorum, and the nodes that answered it was missing there. */
export interface LostCopies {
  readonly keys: Pick<ResourceKeys, 'lock'>;
  readonly token: string;
  /** When (`performance.now()`) the extended copies end: the round's start plus the ttl it asked for. */
  readonly endsAt: number;
  /** A node that extended the lease: its holder record is read there. */
  readonly source: number;
  /** The nodes that answered "missing" (nothing under the key: a restart lost it, or it expired there). */
  readonly missing: readonly number[];
}

/**
 * Gives leases back to the Redlock nodes that lost them (`SET NX PX`, same token, with the holder record), so
 * that one node restarting empty does not leave the lease one more loss away from a rival's quorum.
 *
 * Why this is safe:
 * - It only follows a renewal whose extensions alone reached a quorum within the lease's validity. The holder
 *   held the lease on a quorum before the re-grant, so the re-grant restores its margin and never makes a
 *   quorum it did not have: a holder that finds its token on a minority (the others restarted empty, or a
 *   rival holds them) is told its lease is lost, and nothing is written for it.
 * - `SET NX` never overwrites: a node where anything is under the key (a rival's lease, a rival's attempt not
 *   yet undone, a hand-off reservation) keeps it. While this lease is on a quorum no rival can have one, and
 *   a rival's leftover attempt on the node is undone by that rival; the next renewal then re-grants there.
 * - The copy ends no later than the extended copies do (its PX is what is left of the round's ttl when it is
 *   sent), and the holder's validity counts only from the extensions, never from a re-grant: a re-grant that
 *   arrives late, after the lease ended elsewhere, is one node's stale copy, which no quorum can be built on
 *   (a re-grant reaches at most the minority that answered "missing") and which expires by itself.
 * - Fences: the fence counter is left alone, neither INCRed (the lease keeps the fence it was granted with)
 *   nor copied from another node. A node that restarted empty has no counter, so the next grant that INCRs
 *   it starts from the server clock, above every fence granted before; a copied counter could come from a
 *   node whose RAISE_FENCE write-back failed (settleFence needs only a quorum), and that stale value would
 *   then win over the clock seed and let a later fence go backwards.
 *
 * Best effort: a node that does not answer in time, or a lease whose holder record cannot be read, is given
 * back at the next renewal instead. Never throws.
 * @param clients the nodes' clients, by node index
 * @param timeout how long to wait for each node, in ms
 */
export async function regrantLostCopies(
  clients: readonly RedisClientPort[],
  timeout: number,
  leases: readonly LostCopies[],
): Promise<void> {
  if (leases.length === 0) return;
  const records = await holderRecords(clients, timeout, leases);
  const byNode = new Map<number, LostCopies[]>();
  for (const lease of leases) {
    if (!records.has(lease)) continue;
    for (const node of lease.missing) addTo(byNode, node, lease);
  }
  const nodes = [...byNode.keys()];
  await sendToAll(
    nodes.length,
    (index) => {
      const now = performance.now();
      const calls: ScriptCall[] = [];
      for (const lease of byNode.get(nodes[index]) ?? []) {
        const ttl = Math.floor(lease.endsAt - now);
        if (ttl < 1) continue;
        calls.push({ keys: [lease.keys.lock], args: [lease.token, ttl, records.get(lease) ?? ''] });
      }
      return calls.length === 0 ? Promise.resolve([]) : runScriptBatch(clients[nodes[index]], REGRANT, calls);
    },
    timeout,
  );
}

/**
 * The holder record of each lease ('' when it was granted without one), read with one MGET per source node;
 * none for a lease whose token no longer holds its source node's key.
 */
async function holderRecords(
  clients: readonly RedisClientPort[],
  timeout: number,
  leases: readonly LostCopies[],
): Promise<Map<LostCopies, string>> {
  const bySource = new Map<number, LostCopies[]>();
  for (const lease of leases) addTo(bySource, lease.source, lease);
  const sources = [...bySource.keys()];
  const records = new Map<LostCopies, string>();
  await sendToAll(
    sources.length,
    async (index) => {
      const group = bySource.get(sources[index]) ?? [];
      const values = await clients[sources[index]].mget(...group.map((lease) => lease.keys.lock));
      group.forEach((lease, position) => {
        const stored = readStoredLease(values[position]);
        // the record travels with the lease: read it from a node where the token still holds it; where it does
        // not any more, the lease was released (or lost) since it was extended, and is not given back
        if (stored?.lease && stored.token === lease.token) records.set(lease, stored.holder ?? '');
      });
    },
    timeout,
  );
  return records;
}

function addTo<K, V>(groups: Map<K, V[]>, key: K, value: V): void {
  const group = groups.get(key);
  if (group) group.push(value);
  else groups.set(key, [value]);
}
