import type { LockListing, LockRevoking } from '../../interfaces/lock-listing.interface.js';
import type { LockListingPage, LockListingQuery, LockRevocation } from '../../interfaces/lock-listing.interface.js';
import { LockStoreError } from '../../errors/lock-store.error.js';
import { readStoredLease } from '../redis/lease-value.js';
import { scanLockKeys, scanPage } from '../redis/lock-key-scan.js';
import { permitKeys } from '../redis/permits/permit-keys.js';
import { REVOKED_KEPT_FOR, type RedisListingOptions } from '../redis/redis-listing.js';
import { resourceKeys } from '../redis/resource-keys.js';
import { runScript } from '../redis/script-runner.js';
import { REVOKE } from '../redis/scripts/revoke.script.js';
import type { QuorumNodes } from './quorum-nodes.js';
import { countAnswers, sendToAll, type NodeReply } from './quorum-round.js';
import { settleFence } from './redlock-fence.js';
import type { RenewalLosses } from './renewal-losses.js';

type RevokeReply = readonly [ended: number, fence: number];

/** What the listing needs of its `RedlockStore`: its nodes instead of one client. */
export interface RedlockListingOptions extends Omit<RedisListingOptions, 'client'> {
  readonly nodes: QuorumNodes;
  /** What the store's renewals found about the leases they lost. */
  readonly losses: RenewalLosses;
}

/**
 * The operator's view of a Redlock store. Keys are listed from any node: each node is read by SCAN in turn, and
 * a key found on a node is left out when an earlier node has it too (it was listed there), so a page names each
 * key once. Whether a key is held is decided as `inspect` decides it, by the quorum: a copy left on a minority
 * of nodes is read and left out. A node that does not answer is passed over (a key held on a quorum is on
 * another node too); more silent nodes than a quorum allows is an error.
 *
 * A forced release runs the Redis store's script (scripts/revoke.script.ts) on every node, then brings a quorum
 * of fence counters up to the highest fence it took, as a grant does (redlock-fence.ts): the next grant's quorum
 * shares a node with this one, so its fence is higher.
 */
export class RedlockListing implements LockListing, LockRevoking {
  constructor(private readonly options: RedlockListingOptions) {}

  async keys(query: LockListingQuery): Promise<LockListingPage> {
    const { nodes, keyPrefix } = this.options;
    const clients = await this.clients();
    // by node index, the scans of this page that failed: more than a quorum allows is an outage
    const scans: NodeReply<unknown>[] = clients.map(() => ({ state: 'ok', value: undefined }));
    return scanPage(clients.length, query, async (node, cursor, count) => {
      const [scan] = await sendToAll(
        1,
        () => scanLockKeys(clients[node], keyPrefix, query.prefix ?? '', cursor, count),
        nodes.timeout,
      );
      if (scan.state !== 'ok') {
        scans[node] = scan;
        if (countAnswers(scans) < nodes.quorum) throw nodes.noQuorum('list', undefined, scans);
        return ['0', []];
      }
      const [next, found] = scan.value;
      return [next, await this.notListedBefore(node, found)];
    });
  }

  /**
   * Whether some process waits for `key`: Redlock keeps no line, but a caller that waits marks the lease it was
   * refused (so that its release sends a notice). So 1 while a node's copy of the lease is marked, else 0.
   */
  async waiters(key: string): Promise<number> {
    const lock = resourceKeys(this.options.keyPrefix, key).lock;
    const replies = await this.options.nodes.round((client) => client.get(lock));
    return countAnswers(replies, isMarked) > 0 ? 1 : 0;
  }

  async revoke(key: string): Promise<LockRevocation> {
    const { nodes, keyPrefix, publish } = this.options;
    const keys = resourceKeys(keyPrefix, key);
    const permits = permitKeys(keyPrefix, key);
    const replies = await nodes.round(
      (client) =>
        runScript(
          client,
          REVOKE,
          [keys.lock, keys.fence, permits.state, keys.revoked],
          [keys.channel, publish, REVOKED_KEPT_FOR],
        ) as Promise<RevokeReply>,
    );
    if (countAnswers(replies) < nodes.quorum) throw nodes.noQuorum('revoke', key, replies);
    const settled = await settleFence(nodes, keys, replies.map(fenceOf));
    if ('failure' in settled) {
      const detail = `the raised fence could not be recorded on a quorum of ${nodes.quorum} nodes (${settled.failure})`;
      throw new LockStoreError('revoke', key, undefined, detail);
    }
    const ended = Math.max(...replies.map((reply) => (reply.state === 'ok' ? Number(reply.value[0]) : 0)));
    return { ended, fence: settled.fence };
  }

  /**
   * Whether any node remembers `token` as revoked (a token is random: one node saying so is enough). Answered at
   * once for a lease a renewal just lost, from that renewal's own answers; else by asking every node.
   */
  async wasRevoked(key: string, token: string): Promise<boolean> {
    const found = this.options.losses.take(key, token);
    if (found !== undefined) return found;
    const revoked = resourceKeys(this.options.keyPrefix, key).revoked;
    const replies = await this.options.nodes.round((client) => client.hexists(revoked, token));
    return countAnswers(replies, (found) => found === 1) > 0;
  }

  private async clients() {
    await this.options.nodes.connected;
    return this.options.nodes.clients();
  }

  /** The keys found on node `node` that no earlier node answering in time holds (those were listed there). */
  private async notListedBefore(node: number, found: string[]): Promise<string[]> {
    if (node === 0 || found.length === 0) return found;
    const clients = await this.clients();
    const locks = found.map((key) => resourceKeys(this.options.keyPrefix, key).lock);
    const earlier = await sendToAll(node, (index) => clients[index].mget(...locks), this.options.nodes.timeout);
    return found.filter((_key, position) =>
      earlier.every((reply) => reply.state !== 'ok' || reply.value[position] === null),
    );
  }
}

/** Whether a lock key's value is a lease that a waiting caller marked. */
function isMarked(value: string | null): boolean {
  const stored = readStoredLease(value);
  return stored?.lease === true && stored.marked;
}

/** The fence a node took in a forced release; `undefined` for a node that did not answer. */
function fenceOf(reply: NodeReply<RevokeReply>): number | undefined {
  return reply.state === 'ok' ? Number(reply.value[1]) : undefined;
}
