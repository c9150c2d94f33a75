import type { LockStoreVerification } from '../../interfaces/lock-store.interface.js';
import { checkEviction, judgeEviction, type EvictionCheck } from '../redis/eviction-policy.js';
import { ALL_SCRIPTS } from '../redis/scripts/index.js';
import { failureOf, type QuorumNodes } from './quorum-nodes.js';
import { countAnswers } from './quorum-round.js';
import { checkDistinctServers, identifyServer } from './redlock-nodes.js';

/** How strict the startup check is about nodes that may evict leases. */
export interface VerifyPolicy {
  /** Warn instead of failing for a node that may evict keys. */
  readonly acceptEvictionRisk: boolean;
}

/** What `RedlockStore.verify()` checks, on `nodes`: see there. */
export async function verifyNodes(
  nodes: QuorumNodes,
  { acceptEvictionRisk }: VerifyPolicy,
): Promise<LockStoreVerification> {
  const { labels } = nodes;
  const replies = await nodes.round(async (client, index) => {
    // sent together: one round trip per node, well within its timeout
    const [eviction, server] = await Promise.all([
      checkEviction(client, labels[index]),
      identifyServer(client),
      ...ALL_SCRIPTS.map((script) => client.script('LOAD', script.lua)),
    ]);
    return { eviction, server };
  });
  if (countAnswers(replies) < nodes.quorum) throw nodes.noQuorum('load its Lua scripts', undefined, replies);
  const identities = replies.map((reply) => (reply.state === 'ok' ? reply.value.server : undefined));
  const unidentified = checkDistinctServers(labels, identities);
  const evictions = replies.map((reply, index): EvictionCheck =>
    reply.state === 'ok'
      ? reply.value.eviction
      : { node: labels[index], outcome: 'unchecked', reason: `it failed at startup: ${failureOf(reply)}` },
  );
  return { warnings: [...judgeEviction(evictions, { acceptEvictionRisk }), ...unidentified] };
}
