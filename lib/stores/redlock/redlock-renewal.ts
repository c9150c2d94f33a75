import { performance } from 'node:perf_hooks';
import { isOne } from '../redis/client/reply.js';
import { LockStoreError } from '../../errors/lock-store.error.js';
import type { LeaseRenewal } from '../../interfaces/lease.interface.js';
import { extendOnOneServer } from '../redis/extend-on-one-server.js';
import { resourceKeys } from '../redis/resource-keys.js';
import type { RedisClientPort } from '../redis/client/redis-client-port.js';
import type { QuorumNodes } from './quorum-nodes.js';
import { countAnswers, type NodeReply } from './quorum-round.js';
import { regrantLostCopies, type LostCopies } from './redlock-regrant.js';
import { isKeep, noValidityLeft } from './redlock-validity.js';
import type { RenewalLosses } from './renewal-losses.js';
import { undecidedRenewal } from './undecided-renewal.js';

/** What a renewal round needs of its store. */
export interface RenewalRound {
  readonly nodes: QuorumNodes;
  readonly keyPrefix: string;
  readonly driftFactor: number;
  /** The operation named in errors (`extend`, `renew`). */
  readonly operation: string;
  /** Where the leases the round lost are noted, revoked or not, for `wasRevoked` to answer without a round. */
  readonly losses: RenewalLosses;
}

/**
 * One renewal round: EXTEND_MANY on every node (one script run per node). A lease is renewed when a quorum
 * extended it while validity was left, counted from the moment that quorum had answered. Unlike the other
 * rounds it waits for every node (up to the timeout), not just for the quorum: the nodes that answered
 * "missing" then get the lease back in the same round (`regrantLostCopies`, which says why that is safe). A node
 * where a lease was not extended is asked in the same round whether an operator revoked its token, so a lease
 * the round loses is known revoked or taken at once (noted in `losses`).
 * @returns by renewal, `true` when renewed, `false` when lost, the error when that cannot be told
 */
export async function renewOnQuorum(
  { nodes, keyPrefix, driftFactor, operation, losses }: RenewalRound,
  renewals: readonly LeaseRenewal[],
): Promise<Array<boolean | Error>> {
  const keys = renewals.map((renewal) => resourceKeys(keyPrefix, renewal.key));
  const calls = renewals.map((renewal, index) => ({
    keys: [keys[index].lock],
    args: [renewal.token, renewal.ttl],
  }));
  const extendedOn = renewals.map(() => 0);
  const quorumAt: Array<number | undefined> = renewals.map(() => undefined);
  /** By node, its extension answers once they came, also when its revocation check did not come in time. */
  const extensions: Array<unknown[] | undefined> = [];
  const revoked = renewals.map(() => false);
  /** Whether a node where the lease was not extended answered its revocation check: else the reason is unknown. */
  const checked = renewals.map(() => false);
  const started = performance.now();
  const rounds = await nodes.round(async (client, node) => {
    const replies = await extendOnOneServer(client, calls);
    const now = performance.now();
    replies.forEach((reply, index) => {
      if (isExtended(reply) && ++extendedOn[index] === nodes.quorum) quorumAt[index] = now;
    });
    extensions[node] = replies;
    const notExtended = replies.flatMap((reply, index) => (isMissing(reply) || isOther(reply) ? [index] : []));
    const found = await revokedTokens(
      client,
      notExtended.map((index) => ({ key: keys[index].revoked, token: renewals[index].token })),
    );
    found?.forEach((isRevoked, position) => {
      checked[notExtended[position]] = true;
      if (isRevoked) revoked[notExtended[position]] = true;
    });
    return replies;
  });
  const perNode = rounds.map((reply, node): NodeReply<unknown[]> => {
    const answered = extensions[node];
    return reply.state !== 'ok' && answered ? { state: 'ok', value: answered } : reply;
  });
  const lost: LostCopies[] = [];
  const outcomes = renewals.map((renewal, index) => {
    const replies = entryReplies(perNode, index);
    if (countAnswers(replies, isExtended) >= nodes.quorum) {
      const { ttl } = renewal;
      const failure = noValidityLeft({ action: 'extend', ttl, driftFactor, started, answered: quorumAt[index] });
      // a length no holder works under is a release's keep: the quorum set the key to end within it, as asked,
      // and nobody counts on its validity (nor is it given back to nodes that lost it: it ends now)
      if (failure !== undefined && isKeep(ttl, driftFactor)) return true;
      if (failure !== undefined) return new LockStoreError(operation, renewal.key, undefined, failure);
      const missing = replies.flatMap((reply, node) => (reply.state === 'ok' && isMissing(reply.value) ? [node] : []));
      const source = replies.findIndex((reply) => reply.state === 'ok' && isExtended(reply.value));
      if (missing.length > 0) {
        lost.push({ keys: keys[index], token: renewal.token, endsAt: started + renewal.ttl, source, missing });
      }
      return true;
    }
    // lost only when the extended copies and the silent nodes together cannot make a quorum: a silent node may
    // have extended the lease too
    if (countAnswers(replies) < nodes.quorum) return nodes.noQuorum(operation, renewal.key, replies);
    const silent = replies.length - countAnswers(replies);
    if (countAnswers(replies, isExtended) + silent >= nodes.quorum) {
      // a quorum answered, so this is no outage: say what the nodes did, not that none could be reached
      return undecidedRenewal(nodes, operation, renewal.key, replies);
    }
    // no check answered (each came too late): no note, and the reason is asked for when it is wanted
    if (revoked[index] || checked[index]) losses.record(renewal.key, renewal.token, revoked[index]);
    return false;
  });
  // every round waits for the connection, so the clients are there
  await regrantLostCopies(nodes.clients(), nodes.timeout, lost);
  return outcomes;
}

/** EXTEND's answer for a lease it extended. */
function isExtended(reply: unknown): boolean {
  return isOne(reply);
}

/** EXTEND's answer for a key that holds nothing (where another token holds it, it answers 0). */
function isMissing(reply: unknown): boolean {
  return reply === -2;
}

/** EXTEND's answer for a key that another token holds. */
function isOther(reply: unknown): boolean {
  return reply === 0;
}

/**
 * Whether each token is among those an operator's forced release ended on this node (its `revoked` hash), in one
 * pipelined write; `undefined` when the node refuses or fails. Never throws.
 */
async function revokedTokens(
  client: RedisClientPort,
  leases: ReadonlyArray<{ readonly key: string; readonly token: string }>,
): Promise<boolean[] | undefined> {
  if (leases.length === 0) return [];
  try {
    const found = await Promise.all(leases.map(({ key, token }) => client.hexists(key, token)));
    return found.map((answer) => answer === 1);
  } catch {
    return undefined;
  }
}

/** The replies for one entry of a batch sent to every node; a node's batch-wide failure fails each entry. */
function entryReplies(perNode: readonly NodeReply<Array<unknown>>[], index: number): NodeReply<unknown>[] {
  return perNode.map((reply) => {
    if (reply.state !== 'ok') return reply;
    const value = reply.value[index];
    return value instanceof Error ? { state: 'failed', error: value } : { state: 'ok', value };
  });
}
