import { LockStoreError } from '../../errors/lock-store.error.js';
import type { LockState } from '../../interfaces/lease.interface.js';
import { readStoredLease } from '../redis/lease-value.js';
import type { ResourceKeys } from '../redis/resource-keys.js';
import type { QuorumNodes } from './quorum-nodes.js';
import { countAnswers } from './quorum-round.js';
import { lastGrantedFence } from './redlock-fence.js';

type InspectReply = readonly [value: string | null, pttl: number, fence: string | null];

/**
 * What the answering nodes say of `key`: held while one token is on a quorum of them, until the quorum-th
 * longest of its copies ends; free only when no lease could reach its quorum with the nodes that did not answer.
 * @throws LockStoreError when fewer than a quorum answer, or the silent nodes may complete a lease's quorum
 */
export async function inspectOnQuorum(nodes: QuorumNodes, key: string, keys: ResourceKeys): Promise<LockState> {
  const { quorum } = nodes;
  const replies = await nodes.round(async (client) => {
    const results = await client.pipeline().get(keys.lock).pttl(keys.lock).get(keys.fence).exec();
    return (results ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as unknown as InspectReply;
  });
  if (countAnswers(replies) < quorum) throw nodes.noQuorum('inspect', key, replies);
  const leases = new Map<string, { ttls: number[]; record?: string }>();
  const fences: number[] = [];
  for (const reply of replies) {
    if (reply.state !== 'ok') continue;
    const [value, pttl, fenceValue] = reply.value;
    if (fenceValue !== null) fences.push(Number(fenceValue));
    // '~owner' is a hand-off reservation, not a lease
    const stored = readStoredLease(value);
    if (!stored?.lease) continue;
    const lease = leases.get(stored.token) ?? { ttls: [] };
    lease.ttls.push(pttl < 0 ? Infinity : pttl);
    lease.record ??= stored.holder;
    leases.set(stored.token, lease);
  }
  // held when one token is on a quorum; it stays held until the quorum-th longest of its leases ends
  let remaining: number | undefined;
  let holder: string | undefined;
  for (const lease of leases.values()) {
    if (lease.ttls.length < quorum) continue;
    const untilQuorumLost = lease.ttls.sort((a, b) => b - a)[quorum - 1];
    remaining = Math.max(remaining ?? 0, untilQuorumLost);
    holder = lease.record;
  }
  // free only when no lease could have its quorum with the nodes that did not answer: saying "free" of a
  // lease held on a silent node would tell a caller that nobody holds what somebody does
  const silent = replies.length - countAnswers(replies);
  const undecided = [...leases.values()].find((lease) => lease.ttls.length + silent >= quorum);
  if (remaining === undefined && undecided) {
    const detail =
      `cannot tell whether it is held: one lease is on ${undecided.ttls.length} of the nodes that answered, and ` +
      `the ${silent} that did not may complete its quorum of ${quorum} (${nodes.failures(replies)})`;
    throw new LockStoreError('inspect', key, undefined, detail);
  }
  return {
    held: remaining !== undefined,
    ...(remaining !== undefined && remaining !== Infinity ? { remainingTtl: remaining } : {}),
    ...(fences.length > 0 ? { fence: lastGrantedFence(fences, quorum) } : {}),
    ...(remaining !== undefined && holder !== undefined ? { holder } : {}),
  };
}
