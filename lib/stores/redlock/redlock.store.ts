import { newOwnerId } from '../../utils/owner-id.js';
import { isOne } from '../redis/client/reply.js';
import { performance } from 'node:perf_hooks';
import { LockStoreError } from '../../errors/lock-store.error.js';
import type {
  AcquireRequest,
  AcquireResult,
  LeaseRenewal,
  LockState,
  ReleaseWatch,
} from '../../interfaces/lease.interface.js';
import type { LockStore, LockStoreVerification } from '../../interfaces/lock-store.interface.js';
import type { LockStoreCapabilities } from '../../interfaces/store-capabilities.interface.js';
import { resourceKeys, type ResourceKeys } from '../redis/resource-keys.js';
import { FanInWatch } from './fan-in-watch.js';
import { NotifiableWatch } from '../shared/notifiable-watch.js';
import { QuorumNodes } from './quorum-nodes.js';
import { countAnswers, sendToAll, type NodeReply } from './quorum-round.js';
import { settleFence } from './redlock-fence.js';
import { inspectOnQuorum } from './redlock-inspect.js';
import { RedlockListing } from './redlock-listing.js';
import { checkRedlockStoreOptions, type RedlockStoreOptions } from './redlock-options.js';
import { renewOnQuorum } from './redlock-renewal.js';
import { noValidityLeft, redlockClockDrift } from './redlock-validity.js';
import { verifyNodes } from './redlock-verify.js';
import { RenewalLosses } from './renewal-losses.js';
import { ReleaseSubscriber } from '../redis/release-subscriber.js';
import { runScript } from '../redis/script-runner.js';
import { ACQUIRE, acquireArgs, RELEASE, releaseArgs } from '../redis/scripts/index.js';
import { isReleased } from '../redis/scripts/release.script.js';
import { LINE_MODE } from '../redis/line/line-protocol.js';

export type { RedlockNode } from './redlock-nodes.js';
export type { RedlockStoreOptions } from './redlock-options.js';

type AcquireReply = readonly [granted: number, value: number];

/**
 * A lock store over N independent Redis nodes (the Redlock algorithm): a lease exists while a majority of
 * the nodes hold it, so it survives the loss of a minority of them. Every operation goes to all nodes at
 * once, each with its own timeout, and is decided by the quorum.
 *
 * Contention and outage stay apart: a lock that others hold is an answer (`acquired: false`); fewer
 * answering nodes than a quorum is a {@link LockStoreError} that says no quorum was reachable.
 *
 * A renewal that still reaches a quorum gives the lease back to the nodes that answered it was missing (a
 * restart lost it), so the holder keeps its margin: one restart at a time, each followed by a renewal,
 * never lets a rival in (see `regrantLostCopies` in redlock-regrant.ts).
 *
 * What it cannot promise: a node that restarts without its data (no AOF with fsync) forgets the leases it
 * held; if a second node does the same before the next renewal, a rival may reach a quorum with the two.
 * Keep a restarted node out for the longest TTL, or persist with `appendfsync always`. Fences share this limit.
 *
 * Clients passed in keep their own settings: a low `maxRetriesPerRequest` (1 is what the store uses for
 * connections it opens) keeps commands for a dead node from queueing for minutes; the store stops waiting
 * for them after `timeout` either way.
 *
 * @example
 * const store = new RedlockStore({ nodes: ['redis://a:6379', 'redis://b:6379', 'redis://c:6379'] });
 */
export class RedlockStore implements LockStore {
  /** How many nodes must agree: a majority, `floor(N / 2) + 1`. */
  readonly quorum: number;
  private readonly nodes: QuorumNodes;
  private readonly prefix: string;
  private readonly driftFactor: number;
  /** How long a contended release reserves the key against this process, in ms. */
  private readonly handoffWindow: number;
  /**
   * Its drift rule (`driftFactor`) and hand-off window, the listing and forced releases; no line of waiting
   * processes (each node would keep its own, and reservations split across them reach no quorum) and no permits.
   */
  readonly capabilities: LockStoreCapabilities;
  private readonly acceptEvictionRisk: boolean;
  private readonly publishCommand: string;
  private readonly owner = newOwnerId();
  private readonly subscribers?: readonly ReleaseSubscriber[];
  private readonly watches = new Set<FanInWatch>();
  /** The leases renewals lost, revoked or not: what the listing's `wasRevoked` answers first. */
  private readonly losses = new RenewalLosses();
  private closed = false;

  /**
   * @throws LockConfigurationError when an option is invalid or has an unknown name, before any connection
   *   is opened
   */
  constructor(options: RedlockStoreOptions) {
    const settings = checkRedlockStoreOptions(options);
    const checked = settings.nodes;
    this.prefix = settings.keyPrefix;
    this.driftFactor = settings.driftFactor;
    this.handoffWindow = settings.handoffWindow;
    this.acceptEvictionRisk = settings.acceptEvictionRisk;
    const notices = settings.releaseNotices;
    this.publishCommand = notices ? 'PUBLISH' : '';
    this.nodes = new QuorumNodes(checked, settings.timeout);
    this.quorum = this.nodes.quorum;
    // the listing and forced releases: one object, both capabilities
    const listing = new RedlockListing({
      nodes: this.nodes,
      keyPrefix: this.prefix,
      publish: this.publishCommand,
      losses: this.losses,
    });
    this.capabilities = {
      limits: {
        // `ttl * driftFactor + 2 ms`: holders count their validity with it
        clockDrift: (ttl) => redlockClockDrift(ttl, settings.driftFactor),
        handoffWindow: settings.handoffWindow,
      },
      listing,
      revoking: listing,
      absent: {
        line: 'each node would keep its own line, and reservations split across them reach no quorum',
        permits:
          'a quorum of independent Redis nodes cannot count the holders of one key in one atomic step, so it could ' +
          'let in more than the limit (or a writer beside readers); use RedisLockStore (one Redis, Sentinel or ' +
          'Cluster) or MemoryLockStore for these keys',
        records:
          'a response kept on independent nodes would need a quorum for every read and write, and a node that ' +
          'restarts empty could let a retried request run twice; use RedisLockStore (one Redis, Sentinel or ' +
          'Cluster), EtcdLockStore, PostgresLockStore or MemoryLockStore',
      },
    };
    if (notices) {
      // a subscriber connects on its first watch, which runs after `connected`
      this.subscribers = checked.map(
        (_, index) => new ReleaseSubscriber(() => this.nodes.clients()[index].duplicate()),
      );
    }
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const keys = this.keysOf(request.key);
    // no line of waiters: each node would keep its own, and reservations split across them reach no quorum
    const args = acquireArgs(request, this.owner, {
      line: LINE_MODE.stayOut,
      lineTtl: 0,
      marks: request.waiting !== undefined && this.subscribers !== undefined,
    });
    const started = performance.now();
    const replies = await this.nodes.round(
      (client) => runScript(client, ACQUIRE, [keys.lock, keys.fence, keys.line], args) as Promise<AcquireReply>,
      (sofar) => countAnswers(sofar, isGrant) >= this.quorum,
    );
    const grants = countAnswers(replies, isGrant);
    if (grants < this.quorum) {
      await this.undo(keys, request.token);
      if (countAnswers(replies) < this.quorum) throw this.nodes.noQuorum('acquire', request.key, replies);
      return { acquired: false, remainingTtl: longestHold(replies) };
    }
    const fenced = request.fencing ? await settleFence(this.nodes, keys, grantedFences(replies)) : undefined;
    let failure: string | undefined;
    if (fenced && 'failure' in fenced) {
      failure = `the fence could not be recorded on a quorum of ${this.quorum} nodes (${fenced.failure})`;
    } else {
      failure = noValidityLeft({ action: 'grant', ttl: request.ttl, driftFactor: this.driftFactor, started });
    }
    if (failure !== undefined) {
      await this.undo(keys, request.token);
      throw new LockStoreError('acquire', request.key, undefined, `${failure}; the grant was undone on every node`);
    }
    return fenced && 'fence' in fenced ? { acquired: true, fence: fenced.fence } : { acquired: true };
  }

  async release(key: string, token: string): Promise<boolean> {
    const keys = this.keysOf(key);
    const replies = await this.nodes.round(
      (client, index) =>
        runScript(client, RELEASE, [keys.lock, keys.fence, keys.line], this.releaseArgs(keys, token, index)),
      (sofar) => countAnswers(sofar, isReleased) >= this.quorum,
    );
    if (countAnswers(replies, isReleased) >= this.quorum) return true;
    if (countAnswers(replies) < this.quorum) throw this.nodes.noQuorum('release', key, replies);
    return false;
  }

  /**
   * Extends the lease on a quorum; `true` only while validity is left (`ttl` minus the time the quorum took and the
   * drift allowance). A `ttl` shorter than three times its drift allowance is a release's keep, which no holder
   * works under: `true` once a quorum applied it (the key ends within `ttl`), however late the answer came.
   * @throws LockStoreError when fewer than a quorum answer, or a quorum extended a lease too late for any validity
   */
  async extend(key: string, token: string, ttl: number): Promise<boolean> {
    const [outcome] = await this.renew([{ key, token, ttl }], 'extend');
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  async extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    if (renewals.length === 0) return [];
    return this.renew(renewals, 'renew');
  }

  /** See `inspectOnQuorum`. */
  async inspect(key: string): Promise<LockState> {
    return inspectOnQuorum(this.nodes, key, this.keysOf(key));
  }

  async watch(key: string): Promise<ReleaseWatch> {
    const subscribers = this.subscribers;
    if (!subscribers || this.closed) return NotifiableWatch.timerOnly();
    const channel = this.keysOf(key).channel;
    await this.nodes.connected;
    const watch = new FanInWatch((closed) => this.watches.delete(closed as FanInWatch));
    this.watches.add(watch);
    // a node whose pub/sub is slow or down joins when it answers, if ever; until then notices from the
    // other nodes (every release publishes on each node it releases) and the waiter's backoff cover it
    await sendToAll(
      subscribers.length,
      (index) => subscribers[index].watch(channel).then((source) => watch.add(source)),
      this.nodes.timeout,
    );
    return watch;
  }

  /**
   * Loads the Lua scripts on every node and checks that a quorum accepted them; then that no server was
   * given twice (by its `run_id`) and that no node may evict leases (`maxmemory-policy`), among the nodes that
   * answered even when they are fewer than a quorum. It waits at least 2 s for each node (the connections open
   * with it), not the per-node `timeout` of lock operations.
   * @returns a warning for nodes that may evict leases when `acceptEvictionRisk` is set, for nodes whose
   * policy or identity could not be read (CONFIG GET or INFO refused), and for nodes that did not answer
   * @throws LockConfigurationError naming the nodes that are one server, or each node that may evict leases
   * @throws LockStoreError when fewer than a quorum of nodes answer, or the user may not run scripts
   */
  async verify(): Promise<LockStoreVerification> {
    return verifyNodes(this.nodes, { acceptEvictionRisk: this.acceptEvictionRisk });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const watch of this.watches) watch.detach();
    this.watches.clear();
    await Promise.all((this.subscribers ?? []).map((subscriber) => subscriber.close()));
    await this.nodes.close();
  }

  private keysOf(key: string): ResourceKeys {
    return resourceKeys(this.prefix, key);
  }

  private async renew(renewals: readonly LeaseRenewal[], operation: string): Promise<Array<boolean | Error>> {
    return renewOnQuorum(
      { nodes: this.nodes, keyPrefix: this.prefix, driftFactor: this.driftFactor, operation, losses: this.losses },
      renewals,
    );
  }

  private releaseArgs(keys: ResourceKeys, token: string, index: number): Array<string | number> {
    const ownListeners = this.subscribers?.[index].isListening(keys.channel) ? 1 : 0;
    return releaseArgs(token, {
      channel: keys.channel,
      publish: this.publishCommand,
      owner: this.owner,
      handoffWindow: this.handoffWindow,
      ownListeners,
    });
  }

  /**
   * Releases a failed attempt on every node, token-checked and quietly (no notice, no hand-off): a node
   * may have granted it. Commands to one node run in the order they were sent, replays after a reconnect
   * included, so a node that timed out gets this release after the grant it may still apply. The one
   * exception: on a node that lost its script cache, a NOSCRIPT retry of the grant can land after this
   * release, and that minority lease lasts until its TTL (costing that key one node's vote until then).
   */
  private async undo(keys: ResourceKeys, token: string): Promise<void> {
    await this.nodes.round((client) =>
      runScript(
        client,
        RELEASE,
        [keys.lock, keys.fence, keys.line],
        releaseArgs(token, {
          channel: keys.channel,
          publish: '',
          owner: this.owner,
          handoffWindow: 0,
          ownListeners: 0,
        }),
      ),
    );
  }
}

function isGrant(reply: AcquireReply): boolean {
  return isOne(reply[0]);
}

/** By node index, the fence each granting node took (ACQUIRE's second value); `undefined` for the others. */
function grantedFences(replies: readonly NodeReply<AcquireReply>[]): Array<number | undefined> {
  return replies.map((reply) => (reply.state === 'ok' && isGrant(reply.value) ? reply.value[1] : undefined));
}

/** The longest remaining hold among the nodes that refused: the most a waiter may have to wait. */
function longestHold(replies: readonly NodeReply<AcquireReply>[]): number | undefined {
  let longest = 0;
  for (const reply of replies) {
    if (reply.state !== 'ok' || isGrant(reply.value)) continue;
    // a key without expiry (PTTL -1) holds for an unknown time
    if (reply.value[1] < 0) return undefined;
    longest = Math.max(longest, reply.value[1]);
  }
  return longest;
}
