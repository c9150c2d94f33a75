import { newOwnerId } from '../../utils/owner-id.js';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { LockStoreError } from '../../errors/lock-store.error.js';
import type {
  AcquireRequest,
  AcquireResult,
  LeaseRenewal,
  LockState,
  LockStore,
  LockStoreVerification,
  ReleaseWatch,
} from '../../interfaces/lock-store.interface.js';
import { MAX_DURATION } from '../../utils/duration.js';
import { checkOptionNames, REDLOCK_STORE_OPTIONS } from '../../options/option-names.js';
import { resourceKeys, type ResourceKeys } from '../redis/resource-keys.js';
import { validateBoolean, validateInteger, validateKeyPrefix } from '../../options/validate-options.js';
import { readStoredLease } from '../redis/lease-value.js';
import { checkEviction, judgeEviction, type EvictionCheck } from '../redis/eviction-policy.js';
import { FanInWatch } from './fan-in-watch.js';
import { NotifiableWatch } from '../notifiable-watch.js';
import { describeConnectionFailure } from '../redis/connection-failure.js';
import { countAnswers, NodeTimeoutError, sendToAll, type NodeReply } from './quorum-round.js';
import {
  checkDistinctServers,
  checkNodes,
  connectNodes,
  identifyServer,
  type CheckedNode,
  type ConnectedNode,
  type RedlockNode,
} from './redlock-nodes.js';
import { regrantLostCopies, type LostCopies } from './redlock-regrant.js';
import { DEFAULT_HANDOFF_WINDOW } from '../redis/redis-store-options.js';
import { ReleaseSubscriber } from '../redis/release-subscriber.js';
import { extendOnOneServer } from '../redis/extend-on-one-server.js';
import { runScript } from '../redis/script-runner.js';
import { ACQUIRE, acquireArgs, ALL_SCRIPTS, RAISE_FENCE, RELEASE, releaseArgs } from '../redis/scripts/index.js';
import { LINE_MODE } from '../redis/waiting-line.js';

export type { RedlockNode } from './redlock-nodes.js';

/** Options of {@link RedlockStore}. */
export interface RedlockStoreOptions {
  /**
   * The independent Redis nodes (not replicas of each other, not one Cluster): an odd number, at least 3.
   * A lease is granted when a majority of them (N/2+1) grant it. Clients passed in are never closed by
   * the store; URLs and options become connections the store owns and closes.
   */
  readonly nodes: readonly RedlockNode[];
  /**
   * Namespace of every key and channel: non-empty, printable, without `*?[]\\{}` (see README, Options).
   * @default 'lock:'
   */
  readonly keyPrefix?: string;
  /**
   * Share of the TTL allowed for the clocks of the nodes running at different rates; a grant is valid for
   * `ttl - elapsed - (ttl * driftFactor + 2 ms)`. Below 1/3: a lease is renewed at a third of its ttl, and
   * must still be valid then. @default 0.01
   */
  readonly driftFactor?: number;
  /**
   * How long to wait for each node, in ms. A node silent past it counts as unavailable for that request,
   * so one dead node never stalls a lock; keep it well under the TTLs you use. @default 200
   */
  readonly timeout?: number;
  /** Wake waiters by pub/sub release notices from every node; off means waiters rely on backoff alone. @default true */
  readonly releaseNotices?: boolean;
  /**
   * After releasing a key that other processes wait for, reserve it against this store for this many ms
   * so a waiter elsewhere takes it next instead of this process re-taking it. `0` turns it off. A manager
   * using the store keeps every ttl at least twice as long.
   * @default 20
   */
  readonly handoffWindow?: number;
  /**
   * Start even when a node may evict keys (`maxmemory` set with a `maxmemory-policy` other than
   * `noeviction`): `verify()` then warns instead of failing.
   * @default false
   */
  readonly acceptEvictionRisk?: boolean;
}

/** {@link RedlockStoreOptions} checked, the nodes not yet connected. */
export interface RedlockStoreSettings {
  readonly nodes: readonly CheckedNode[];
  readonly keyPrefix: string;
  readonly driftFactor: number;
  readonly timeout: number;
  readonly releaseNotices: boolean;
  readonly handoffWindow: number;
  readonly acceptEvictionRisk: boolean;
}

/**
 * Checks every option of a {@link RedlockStore} without connecting to anything.
 * @throws LockConfigurationError naming the option
 */
export function checkRedlockStoreOptions(options: RedlockStoreOptions): RedlockStoreSettings {
  if (typeof options !== 'object' || options === null) {
    throw new LockConfigurationError('redlock', options, 'expected an options object with `nodes`');
  }
  checkOptionNames(options, REDLOCK_STORE_OPTIONS);
  const driftFactor = options.driftFactor ?? DEFAULT_DRIFT_FACTOR;
  if (typeof driftFactor !== 'number' || !(driftFactor >= 0 && driftFactor < 1 / 3)) {
    throw new LockConfigurationError(
      'driftFactor',
      options.driftFactor,
      'expected a number from 0 up to (not including) 1/3, the share of a TTL allowed for clock drift: a lease ' +
        'is renewed at a third of its ttl, and must still be valid then',
    );
  }
  return {
    nodes: checkNodes(options.nodes),
    keyPrefix: validateKeyPrefix(options.keyPrefix ?? 'lock:'),
    driftFactor,
    timeout: validateInteger('timeout', options.timeout ?? 200, 1, MAX_DURATION),
    releaseNotices: validateBoolean('releaseNotices', options.releaseNotices ?? true),
    handoffWindow: validateInteger('handoffWindow', options.handoffWindow ?? DEFAULT_HANDOFF_WINDOW, 0, MAX_DURATION),
    acceptEvictionRisk: validateBoolean('acceptEvictionRisk', options.acceptEvictionRisk ?? false),
  };
}

/** The drift allowance of a `ttl` ms lease with `driftFactor`: `ttl * driftFactor + 2 ms`. */
export function redlockClockDrift(ttl: number, driftFactor: number): number {
  return Math.floor(ttl * driftFactor) + 2;
}

/** @default 0.01 */
const DEFAULT_DRIFT_FACTOR = 0.01;

type AcquireReply = readonly [granted: number, value: number];
type InspectReply = readonly [value: string | null, pttl: number, fence: string | null];

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
 * never lets a rival in (see {@link regrantLostCopies}).
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
  /** One label per node (`host:port`), for messages. */
  private readonly labels: readonly string[];
  /** The nodes once connected: at once for clients passed in, after loading ioredis for URLs and options. */
  private readonly connected: Promise<readonly ConnectedNode[]>;
  private nodes?: readonly ConnectedNode[];
  private readonly prefix: string;
  private readonly driftFactor: number;
  private readonly timeout: number;
  /** How long a contended release reserves the key against this process, in ms. */
  readonly handoffWindow: number;
  private readonly acceptEvictionRisk: boolean;
  private readonly publishCommand: string;
  private readonly owner = newOwnerId();
  private readonly subscribers?: readonly ReleaseSubscriber[];
  private readonly watches = new Set<FanInWatch>();
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
    this.timeout = settings.timeout;
    this.handoffWindow = settings.handoffWindow;
    this.acceptEvictionRisk = settings.acceptEvictionRisk;
    const notices = settings.releaseNotices;
    this.publishCommand = notices ? 'PUBLISH' : '';
    this.quorum = Math.floor(checked.length / 2) + 1;
    this.labels = checked.map((node) => node.label);
    this.connected = connectNodes(checked).then((nodes) => (this.nodes = nodes));
    // a failure to connect surfaces through every operation that awaits it
    this.connected.catch(() => undefined);
    if (notices) {
      // a subscriber connects on its first watch, which runs after `connected`
      this.subscribers = checked.map(
        (_, index) => new ReleaseSubscriber(() => (this.nodes as ConnectedNode[])[index].client.duplicate()),
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
    const replies = await this.round(
      (client) =>
        runScript(client, ACQUIRE, [keys.lock, keys.fence, keys.line, keys.offers], args) as Promise<AcquireReply>,
      (sofar) => countAnswers(sofar, isGrant) >= this.quorum,
    );
    const grants = countAnswers(replies, isGrant);
    if (grants < this.quorum) {
      await this.undo(keys, request.token);
      if (countAnswers(replies) < this.quorum) throw this.noQuorum('acquire', request.key, replies);
      return { acquired: false, remainingTtl: longestHold(replies) };
    }
    const fenced = request.fencing ? await this.settleFence(keys, replies) : undefined;
    let failure: string | undefined;
    if (fenced && 'failure' in fenced) {
      failure = `the fence could not be recorded on a quorum of ${this.quorum} nodes (${fenced.failure})`;
    } else {
      failure = this.tooSlow('grant', request.ttl, started);
    }
    if (failure !== undefined) {
      await this.undo(keys, request.token);
      throw new LockStoreError('acquire', request.key, undefined, `${failure}; the grant was undone on every node`);
    }
    return fenced && 'fence' in fenced ? { acquired: true, fence: fenced.fence } : { acquired: true };
  }

  async release(key: string, token: string): Promise<boolean> {
    const keys = this.keysOf(key);
    const replies = await this.round(
      (client, index) =>
        runScript(
          client,
          RELEASE,
          [keys.lock, keys.fence, keys.line, keys.offers],
          this.releaseArgs(keys, token, index),
        ),
      (sofar) => countAnswers(sofar, isOne) >= this.quorum,
    );
    if (countAnswers(replies, isOne) >= this.quorum) return true;
    if (countAnswers(replies) < this.quorum) throw this.noQuorum('release', key, replies);
    return false;
  }

  async extend(key: string, token: string, ttl: number): Promise<boolean> {
    const [outcome] = await this.renew([{ key, token, ttl }], 'extend');
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  async extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    if (renewals.length === 0) return [];
    return this.renew(renewals, 'renew');
  }

  /**
   * One renewal round: EXTEND_MANY on every node (one script run per node). A lease is renewed when a quorum
   * extended it while validity was left, counted from the moment that quorum had answered. Unlike the other
   * rounds it waits for every node (up to the timeout), not just for the quorum: the nodes that answered
   * "missing" then get the lease back in the same round ({@link regrantLostCopies}, which says why that is safe).
   */
  private async renew(renewals: readonly LeaseRenewal[], operation: string): Promise<Array<boolean | Error>> {
    const keys = renewals.map((renewal) => this.keysOf(renewal.key));
    const calls = renewals.map((renewal, index) => ({
      keys: [keys[index].lock],
      args: [renewal.token, renewal.ttl],
    }));
    const extendedOn = renewals.map(() => 0);
    const quorumAt: Array<number | undefined> = renewals.map(() => undefined);
    const started = performance.now();
    const perNode = await this.round(async (client) => {
      const replies = await extendOnOneServer(client, calls);
      const now = performance.now();
      replies.forEach((reply, index) => {
        if (isExtended(reply) && ++extendedOn[index] === this.quorum) quorumAt[index] = now;
      });
      return replies;
    });
    const lost: LostCopies[] = [];
    const outcomes = renewals.map((renewal, index) => {
      const replies = entryReplies(perNode, index);
      if (countAnswers(replies, isExtended) >= this.quorum) {
        const failure = this.tooSlow('extend', renewal.ttl, started, quorumAt[index]);
        if (failure !== undefined) return new LockStoreError(operation, renewal.key, undefined, failure);
        const missing = replies.flatMap((reply, node) =>
          reply.state === 'ok' && isMissing(reply.value) ? [node] : [],
        );
        const source = replies.findIndex((reply) => reply.state === 'ok' && isExtended(reply.value));
        if (missing.length > 0) {
          lost.push({ keys: keys[index], token: renewal.token, endsAt: started + renewal.ttl, source, missing });
        }
        return true;
      }
      if (countAnswers(replies) < this.quorum) return this.noQuorum(operation, renewal.key, replies);
      return false;
    });
    const nodes = this.nodes ?? (await this.connected);
    await regrantLostCopies(
      nodes.map((node) => node.client),
      this.timeout,
      lost,
    );
    return outcomes;
  }

  async inspect(key: string): Promise<LockState> {
    const keys = this.keysOf(key);
    const replies = await this.round(async (client) => {
      const results = await client.pipeline().get(keys.lock).pttl(keys.lock).get(keys.fence).exec();
      return (results ?? []).map(([error, value]) => {
        if (error) throw error;
        return value;
      }) as unknown as InspectReply;
    });
    if (countAnswers(replies) < this.quorum) throw this.noQuorum('inspect', key, replies);
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
      if (lease.ttls.length < this.quorum) continue;
      const untilQuorumLost = lease.ttls.sort((a, b) => b - a)[this.quorum - 1];
      remaining = Math.max(remaining ?? 0, untilQuorumLost);
      holder = lease.record;
    }
    // free only when no lease could have its quorum with the nodes that did not answer: saying "free" of a
    // lease held on a silent node would tell a caller that nobody holds what somebody does
    const silent = replies.length - countAnswers(replies);
    const undecided = [...leases.values()].find((lease) => lease.ttls.length + silent >= this.quorum);
    if (remaining === undefined && undecided) {
      const detail =
        `cannot tell whether it is held: one lease is on ${undecided.ttls.length} of the nodes that answered, and ` +
        `the ${silent} that did not may complete its quorum of ${this.quorum} (${this.failures(replies)})`;
      throw new LockStoreError('inspect', key, undefined, detail);
    }
    return {
      held: remaining !== undefined,
      ...(remaining !== undefined && remaining !== Infinity ? { remainingTtl: remaining } : {}),
      ...(fences.length > 0 ? { fence: lastGrantedFence(fences, this.quorum) } : {}),
      ...(remaining !== undefined && holder !== undefined ? { holder } : {}),
    };
  }

  async watch(key: string): Promise<ReleaseWatch> {
    const subscribers = this.subscribers;
    if (!subscribers || this.closed) return NotifiableWatch.timerOnly();
    const channel = this.keysOf(key).channel;
    await this.connected;
    const watch = new FanInWatch((closed) => this.watches.delete(closed as FanInWatch));
    this.watches.add(watch);
    // a node whose pub/sub is slow or down joins when it answers, if ever; until then notices from the
    // other nodes (every release publishes on each node it releases) and the waiter's backoff cover it
    await sendToAll(
      subscribers.length,
      (index) => subscribers[index].watch(channel).then((source) => watch.add(source)),
      this.timeout,
    );
    return watch;
  }

  /**
   * Loads the Lua scripts on every node and checks that a quorum accepted them; then that no server was
   * given twice (by its `run_id`) and that no node may evict leases (`maxmemory-policy`).
   * @returns a warning for nodes that may evict leases when `acceptEvictionRisk` is set, for nodes whose
   * policy or identity could not be read (CONFIG GET or INFO refused), and for nodes that did not answer
   * @throws LockConfigurationError naming the nodes that are one server, or each node that may evict leases
   * @throws LockStoreError when fewer than a quorum of nodes answer, or the user may not run scripts
   */
  async verify(): Promise<LockStoreVerification> {
    const replies = await this.round(async (client, index) => {
      // sent together: one round trip per node, well within its timeout
      const [eviction, server] = await Promise.all([
        checkEviction(client, this.labels[index]),
        identifyServer(client),
        ...ALL_SCRIPTS.map((script) => client.script('LOAD', script.lua)),
      ]);
      return { eviction, server };
    });
    if (countAnswers(replies) < this.quorum) throw this.noQuorum('load its Lua scripts', undefined, replies);
    const identities = replies.map((reply) => (reply.state === 'ok' ? reply.value.server : undefined));
    const unidentified = checkDistinctServers(this.labels, identities);
    const evictions = replies.map((reply, index): EvictionCheck =>
      reply.state === 'ok'
        ? reply.value.eviction
        : { node: this.labels[index], outcome: 'unchecked', reason: `it failed at startup: ${failureOf(reply)}` },
    );
    return { warnings: [...judgeEviction(evictions, this.acceptEvictionRisk), ...unidentified] };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const watch of this.watches) watch.detach();
    this.watches.clear();
    await Promise.all((this.subscribers ?? []).map((subscriber) => subscriber.close()));
    const nodes = await this.connected.catch(() => []);
    const owned = nodes.filter((node) => node.owned).map((node) => node.client);
    // QUIT waits behind commands queued for a node that is down: give it the node timeout, then cut
    const quits = await sendToAll(owned.length, (index) => owned[index].quit(), this.timeout);
    quits.forEach((quit, index) => quit.state !== 'ok' && owned[index].disconnect());
  }

  private keysOf(key: string): ResourceKeys {
    return resourceKeys(this.prefix, key);
  }

  private async round<T>(
    send: (client: Redis, index: number) => Promise<T>,
    decided?: (replies: readonly NodeReply<T>[]) => boolean,
  ): Promise<NodeReply<T>[]> {
    const nodes = this.nodes ?? (await this.connected);
    return sendToAll(nodes.length, (index) => send(nodes[index].client, index), this.timeout, decided);
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
    await this.round((client) =>
      runScript(
        client,
        RELEASE,
        [keys.lock, keys.fence, keys.line, keys.offers],
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
   */
  private async settleFence(
    keys: ResourceKeys,
    replies: readonly NodeReply<AcquireReply>[],
  ): Promise<{ fence: number } | { failure: string }> {
    const granted = replies.map((reply) => (reply.state === 'ok' && isGrant(reply.value) ? reply.value[1] : undefined));
    const fence = Math.max(...granted.map((value) => value ?? 0));
    const behind = granted.map((value) => value !== undefined && value < fence);
    const lagging = behind.filter(Boolean).length;
    if (lagging === 0) return { fence };
    const raised = await this.round(
      (client, index) =>
        behind[index]
          ? (runScript(client, RAISE_FENCE, [keys.fence], [fence]) as Promise<number>)
          : Promise.resolve(-1),
      (sofar) => countAnswers(sofar, isRaised) === lagging,
    );
    const atFence = granted.filter((value) => value === fence).length;
    if (atFence + countAnswers(raised, isRaised) >= this.quorum) return { fence };
    return { failure: this.failures(raised.map((reply, index) => (behind[index] ? reply : OK))) };
  }

  /** The drift allowance of a `ttl` ms lease: `ttl * driftFactor + 2 ms`; holders count their validity with it. */
  clockDrift(ttl: number): number {
    return redlockClockDrift(ttl, this.driftFactor);
  }

  /**
   * Why a lease of `ttl` ms set by a request sent at `started` is no use: the quorum answered (at `answered`)
   * so late that `ttl - elapsed - drift` is not positive (drift: `ttl * driftFactor + 2 ms`). `undefined` while valid.
   */
  private tooSlow(action: string, ttl: number, started: number, answered = performance.now()): string | undefined {
    const drift = this.clockDrift(ttl);
    const elapsed = answered - started;
    if (ttl - elapsed - drift > 0) return undefined;
    return (
      `the nodes took ${Math.round(elapsed)} ms to ${action} a ${ttl} ms lease (with ${drift} ms allowed for clock ` +
      'drift), so no validity was left. Use a longer ttl, or check the latency of the nodes'
    );
  }

  /** The error of a request that fewer than a quorum of nodes answered: an outage, never contention. */
  private noQuorum(operation: string, key: string | undefined, replies: readonly NodeReply<unknown>[]): LockStoreError {
    const failed = replies.filter((reply) => reply.state !== 'ok');
    const errors = failed.map((reply) => (reply.state === 'failed' ? reply.error : new Error('no reply')));
    const refused = errors.some((error) => (error as { name?: unknown }).name === 'ReplyError');
    const detail =
      `no quorum was reachable: ${failed.length} of ${this.labels.length} Redis nodes ` +
      `${refused ? 'failed or were unreachable' : 'unreachable'}; a quorum of ${this.quorum} is needed ` +
      `(${this.failures(replies)})`;
    return new LockStoreError(operation, key, new AggregateError(errors, detail), detail);
  }

  /** Each failing node with its reason, for messages. */
  private failures(replies: readonly NodeReply<unknown>[]): string {
    return replies
      .map((reply, index) =>
        reply.state === 'ok' ? undefined : `${this.labels[index]}: ${this.failureOfNode(reply, index)}`,
      )
      .filter((text) => text !== undefined)
      .join('; ');
  }

  /**
   * Why node `index` failed: for a command given up while the node reconnects, or timed out meanwhile, the
   * node's own connection error says why (`connection refused (ECONNREFUSED)`, a refused `AUTH`).
   */
  private failureOfNode(reply: NodeReply<unknown>, index: number): string {
    if (reply.state === 'failed') {
      const cause = this.nodes?.[index]?.connectionError(reply.error) ?? reply.error;
      const silent = cause === reply.error && reply.error instanceof NodeTimeoutError;
      const described = silent ? undefined : describeConnectionFailure(cause);
      if (described !== undefined) return described;
    }
    return failureOf(reply);
  }
}

function isGrant(reply: AcquireReply): boolean {
  return reply[0] === 1;
}

function isOne(reply: unknown): boolean {
  return reply === 1;
}

/** Why a node gave no answer in a round. */
function failureOf(reply: NodeReply<unknown>): string {
  if (reply.state === 'ok') return 'answered';
  if (reply.state === 'pending') return 'no reply yet';
  return reply.error instanceof Error ? reply.error.message : String(reply.error);
}

/** EXTEND's answer for a lease it extended. */
function isExtended(reply: unknown): boolean {
  return reply === 1;
}

/** EXTEND's answer for a key that holds nothing (where another token holds it, it answers 0). */
function isMissing(reply: unknown): boolean {
  return reply === -2;
}

function isRaised(reply: number): boolean {
  return reply !== -1;
}

const OK: NodeReply<never> = { state: 'ok', value: undefined as never };

/** The replies for one entry of a batch sent to every node; a node's batch-wide failure fails each entry. */
function entryReplies(perNode: readonly NodeReply<Array<unknown>>[], index: number): NodeReply<unknown>[] {
  return perNode.map((reply) => {
    if (reply.state !== 'ok') return reply;
    const value = reply.value[index];
    return value instanceof Error ? { state: 'failed', error: value } : { state: 'ok', value };
  });
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

/**
 * The last fence granted, from the counters of the nodes that answered: a grant leaves at least a quorum
 * of nodes at its fence, while a node outside that quorum may hold the fence of a failed attempt or of a
 * grant that answered too late (higher, never handed out) or have missed grants (lower); the quorum-th
 * highest counter is the grant's. Counters only grow, so this never goes back either.
 */
function lastGrantedFence(fences: number[], quorum: number): number {
  const sorted = [...fences].sort((a, b) => b - a);
  return sorted[Math.min(quorum, sorted.length) - 1];
}
