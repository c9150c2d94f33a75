import type { LockStoreVerification } from '../../interfaces/lock-store.interface.js';
import { checkEviction, judgeEviction, type EvictionCheck } from '../redis/eviction-policy.js';
import { ALL_SCRIPTS } from '../redis/scripts.js';
import { failureOf, type QuorumNodes } from './quorum-nodes.js';
import { countAnswers } from './quorum-round.js';
import { checkDistinctServers, identifyServer } from './redlock-nodes.js';

/** How strict the startup check is about nodes that may evict leases. */
export interface VerifyPolicy {
  /** Warn instead of failing for a node that may evict keys. */
  readonly acceptEvictionRisk: boolean;
}

/**
 * Loads the Lua scripts on every node and checks that a quorum accepted them; then that no server was
 * given twice (by its `run_id`) and that no node may evict leases (`maxmemory-policy`).
 * @returns a warning for nodes that may evict leases when `acceptEvictionRisk` is set, for nodes whose
 * policy or identity could not be read (CONFIG GET or INFO refused), and for nodes that did not answer
 * @throws LockConfigurationError naming the nodes that are one server, or each node that may evict leases
 * @throws LockStoreError when fewer than a quorum of nodes answer, or the user may not run scripts
 */
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
  return { warnings: [...judgeEviction(evictions, acceptEvictionRisk), ...unidentified] };
}
