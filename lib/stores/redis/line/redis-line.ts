import { performance } from 'node:perf_hooks';
import { isOne } from '../client/reply.js';
import type { RedisClientPort } from '../client/redis-client-port.js';
import type { AcquireRequest } from '../../../interfaces/lease.interface.js';
import type { DirectGrant, HandOverResult, WaitingLine } from '../../../interfaces/waiting-line.interface.js';
import type { ReleaseSubscriber } from '../release-subscriber.js';
import type { ResourceKeys } from '../resource-keys.js';
import { runScript } from '../script-runner.js';
import { retryUntil } from '../../../utils/retry-until.js';
import { DirectGrants } from './direct-grants.js';
import { HAND_OVER, handOverArgs } from './hand-over.script.js';
import { LEAVE_LINE } from './leave-line.script.js';
import { ownChannel } from './line-protocol.js';

/** What a Redis store lends its line: its client, names and notices, and how it releases and reports failures. */
export interface RedisLineParts {
  readonly client: RedisClientPort;
  /** The store's owner id: its place in every line, and the name of its own notice channels. */
  readonly owner: string;
  /** How long a contended release reserves the key for the process first in line, in ms (above 0). */
  readonly handoffWindow: number;
  /** `'PUBLISH'`, or `'SPUBLISH'` on a Cluster. */
  readonly publish: string;
  readonly subscriber: ReleaseSubscriber;
  /** With `replicaAck`, each grant must wait for replicas: no release grants a waiter directly or hands over. */
  readonly replicated: boolean;
  readonly keysOf: (key: string) => ResourceKeys;
  /** Runs a command of `operation` on `key`, its failure made a `LockStoreError`. */
  readonly run: <T>(operation: string, key: string, keys: ResourceKeys, command: () => Promise<T>) => Promise<T>;
  /** The store's token-checked release. */
  readonly release: (key: string, token: string) => Promise<boolean>;
}

/**
 * The line of waiting processes per key on Redis, as the engine sees it (`capabilities.line`): a refused
 * request with `waiting` takes its process's place (ACQUIRE), a contended release reserves the key for the
 * first process in line or grants the lease straight to the request it left there (RELEASE), and a release
 * to this process's own next waiter hands the lease over in the same script (HAND_OVER). Its marks, places,
 * offers and notices are written and read as line-protocol.ts says.
 */
export class RedisLine implements WaitingLine {
  /** Whether a release grants the lease straight to the request the first process left (not with replicaAck). */
  readonly grantsToWaiters: boolean;
  private readonly direct = new DirectGrants();
  /** Direct grants nobody here takes, on their way back to the server. */
  private readonly givingBack = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly parts: RedisLineParts) {
    this.grantsToWaiters = !parts.replicated;
  }

  /**
   * Releases the lease and, in the same script, grants it to `next` unless another process is first in line. A
   * hand-over needs exactly one local waiting queue: two managers sharing this store share one place in the
   * line, and one could keep the key from the other; with replicaAck each grant must wait for replicas on its own.
   */
  async handOver(key: string, token: string, next: AcquireRequest): Promise<HandOverResult> {
    const { client, subscriber, replicated, owner, handoffWindow, publish } = this.parts;
    const keys = this.parts.keysOf(key);
    if (replicated || subscriber.watchers(this.noticesOf(keys)) !== 1) {
      return { released: await this.parts.release(key, token), handedOver: false };
    }
    const args = handOverArgs(token, { channel: keys.channel, publish, owner, handoffWindow }, next);
    const reply = await this.parts.run('release', key, keys, () =>
      runScript(client, HAND_OVER, [keys.lock, keys.fence, keys.line], args),
    );
    const [outcome, fence] = reply as [number, number];
    if (outcome === 0) return { released: false, handedOver: false };
    if (isOne(outcome)) return { released: true, handedOver: false };
    // the next waiter holds it now: requests it left in the line are spent
    this.direct.spent(next.key, next.token);
    return next.fencing ? { released: true, handedOver: true, fence } : { released: true, handedOver: true };
  }

  async leaveLine(key: string): Promise<void> {
    if (this.closed) return;
    const { client, owner } = this.parts;
    const keys = this.parts.keysOf(key);
    await this.parts.run('leave the line of', key, keys, () =>
      runScript(client, LEAVE_LINE, [keys.line, keys.lock], [owner]),
    );
  }

  takeGrant(key: string, token: string): DirectGrant | undefined {
    return this.direct.take(key, token);
  }

  withdrawOffer(key: string, token: string): void {
    for (const untaken of this.direct.withdraw(key, token)) this.giveBack(untaken.key, untaken.token, untaken.ttl);
  }

  /**
   * The version under which the head of this process's local queue leaves its request in the process's
   * place, so that a release can grant it directly; `undefined` where releases grant none.
   */
  offer(request: AcquireRequest): number | undefined {
    if (!this.grantsToWaiters) return undefined;
    return this.direct.offer(request.key, request.token, request.ttl, performance.now());
  }

  /** `token` was granted `key` by its own request: the requests it left in the line are spent. */
  spent(key: string, token: string): void {
    this.direct.spent(key, token);
  }

  /** The channel this store's waiters of `keys` listen on: its own where releases grant directly, else the key's. */
  noticesOf(keys: ResourceKeys): string {
    return this.grantsToWaiters ? ownChannel(keys.channel, this.parts.owner) : keys.channel;
  }

  /**
   * A release granted version `version` to one of our waiters (its notice said so): `true` when a waiter may take
   * it (wake them); given back when none will.
   */
  grantArrived(version: number, fence: number): boolean {
    const outcome = this.direct.arrived(version, fence);
    if (!outcome) return false;
    if ('wake' in outcome) return true;
    this.giveBack(outcome.giveBack.key, outcome.giveBack.token, outcome.giveBack.ttl);
    return false;
  }

  /** Stops giving up places, and waits for the grants on their way back (before the connection goes). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.givingBack);
  }

  /**
   * Releases a direct grant nobody here will use, so the key passes to the next in line at once; again after a
   * store error (a connection cut right then), while the grant could still be alive: left alone, it would hold
   * the key for its whole ttl.
   */
  private giveBack(key: string, token: string, ttl: number): void {
    const call = retryUntil(
      () => this.parts.release(key, token),
      performance.now() + ttl,
      () => this.closed,
    );
    this.givingBack.add(call);
    void call.finally(() => this.givingBack.delete(call));
  }
}
