import type { ResourceKeys } from '../redis/resource-keys.js';
import { runScript } from '../redis/script-runner.js';
import { RAISE_FENCE } from '../redis/scripts/index.js';
import type { QuorumNodes } from './quorum-nodes.js';
import { countAnswers, type NodeReply } from './quorum-round.js';

/**
 * The fence of a grant: the highest fence among the granting nodes (each takes the next one of its own
 * counter, floored by its own clock), written back to every granting node whose counter is lower, before
 * the grant is handed out. As no two nodes read their clocks at the same instant, a fenced grant usually
 * needs this second round.
 *
 * Why this is monotonic: the next grant needs a quorum too, and any two quorums share a node. On a
 * quorum of this grant's nodes the counter is at least this fence before the lease is handed out, and
 * no other grant can move those nodes until this lease is released or expires there; so the next grant
 * takes one of them above this fence, and its maximum is higher. Taking the maximum alone is not
 * enough: clocks differ, failed attempts move the nodes they briefly won, and the next quorum could miss
 * the node holding the maximum. Hence the write-back, which must reach a quorum. None of this needs the
 * clocks to agree.
 *
 * Its limit: a node that comes back with an older counter (restarted empty, restored from an old
 * snapshot, failed over to a lagging replica) falls back on its clock; if it is the only node shared by
 * two consecutive quorums, the next fence is above the last one only while the nodes' clocks differ by
 * less than the time between the two grants. Persist the nodes (AOF) when fences matter.
 * @param granted by node index, the fence each granting node took; `undefined` for the others
 */
export async function settleFence(
  nodes: QuorumNodes,
  keys: ResourceKeys,
  granted: readonly (number | undefined)[],
): Promise<{ fence: number } | { failure: string }> {
  const fence = Math.max(...granted.map((value) => value ?? 0));
  const behind = granted.map((value) => value !== undefined && value < fence);
  const lagging = behind.filter(Boolean).length;
  if (lagging === 0) return { fence };
  const raised = await nodes.round(
    (client, index) =>
      behind[index] ? (runScript(client, RAISE_FENCE, [keys.fence], [fence]) as Promise<number>) : Promise.resolve(-1),
    (sofar) => countAnswers(sofar, isRaised) === lagging,
  );
  const atFence = granted.filter((value) => value === fence).length;
  if (atFence + countAnswers(raised, isRaised) >= nodes.quorum) return { fence };
  return { failure: nodes.failures(raised.map((reply, index) => (behind[index] ? reply : OK))) };
}

/**
 * The last fence granted, from the counters of the nodes that answered: a grant leaves at least a quorum
 * of nodes at its fence, while a node outside that quorum may hold the fence of a failed attempt or of a
 * grant that answered too late (higher, never handed out) or have missed grants (lower); the quorum-th
 * highest counter is the grant's. Counters only grow, so this never goes back either.
 */
export function lastGrantedFence(fences: number[], quorum: number): number {
  const sorted = [...fences].sort((a, b) => b - a);
  return sorted[Math.min(quorum, sorted.length) - 1];
}

/** RAISE_FENCE's answer, or the stand-in of a node that had nothing to raise. */
function isRaised(reply: number): boolean {
  return reply !== -1;
}

/** A node left out of the write-back: never a failure. */
const OK: NodeReply<never> = { state: 'ok', value: undefined as never };
