import type { LockStoreVerification } from '../../interfaces/lock-store.interface.js';
import { checkEviction, judgeEviction, type EvictionCheck } from '../redis/eviction-policy.js';
import { ALL_SCRIPTS } from '../redis/scripts/index.js';
import { refuseOldServers } from '../redis/server-version.js';
import { failureOf, type QuorumNodes } from './quorum-nodes.js';
import { countAnswers } from './quorum-round.js';
import { checkDistinctServers, readServerInfo } from './redlock-nodes.js';

/** How strict the startup check is about nodes that may evict leases. */
export interface VerifyPolicy {
  /** Warn instead of failing for a node that may evict keys. */
  readonly acceptEvictionRisk: boolean;
}

/**
 * How long the check waits for each node, in ms, when the store's per-node timeout is shorter. That timeout is
 * for one command on an open connection, kept short for a lease's validity; the check is the first command of a
 * connection the store opens (it connects then: name lookup, TCP, the client's ready check) and runs while the
 * process starts, its busiest time. It waits as long as the module waits for a Redis connection of its own
 * (`connectTimeout`, `commandTimeout`), so a busy machine does not turn a node that answers into a silent one.
 */
const VERIFY_TIMEOUT = 2000;

/** What `RedlockStore.verify()` checks, on `nodes`: see there. */
export async function verifyNodes(
  nodes: QuorumNodes,
  { acceptEvictionRisk }: VerifyPolicy,
): Promise<LockStoreVerification> {
  const { labels } = nodes;
  const replies = await nodes.round(
    async (client, index) => {
      // sent together: one round trip per node
      const [eviction, server] = await Promise.all([
        checkEviction(client, labels[index]),
        readServerInfo(client),
        ...ALL_SCRIPTS.map((script) => client.script('LOAD', script.lua)),
      ]);
      return { eviction, server };
    },
    undefined,
    Math.max(nodes.timeout, VERIFY_TIMEOUT),
  );
  // what the nodes that answered show is a verdict whatever the others did: judged before the quorum
  refuseOldServers(
    'redlock',
    replies.map((reply, index) => ({
      label: labels[index],
      version: reply.state === 'ok' ? reply.value.server.version : undefined,
    })),
  );
  const identities = replies.map((reply) => (reply.state === 'ok' ? reply.value.server.identity : undefined));
  const unidentified = checkDistinctServers(labels, identities);
  const evictions = replies.map((reply, index): EvictionCheck =>
    reply.state === 'ok'
      ? reply.value.eviction
      : { node: labels[index], outcome: 'unchecked', reason: `it failed at startup: ${failureOf(reply)}` },
  );
  const warnings = judgeEviction(evictions, { acceptEvictionRisk });
  if (countAnswers(replies) < nodes.quorum) throw nodes.noQuorum('load its Lua scripts', undefined, replies);
  return { warnings: [...warnings, ...unidentified] };
}
