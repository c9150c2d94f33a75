import { performance } from 'node:perf_hooks';
import type { RedisClusterPort } from './client/redis-client-port.js';
import type { SubscriberPort } from './slot-routed-subscriber.js';
import type { ReleaseWatch } from '../../interfaces/lease.interface.js';
import { NotifiableWatch } from '../shared/notifiable-watch.js';
import { readNotice } from './line/line-protocol.js';
import { handleResubscriptions } from './client/handled-resubscriptions.js';

type Client = SubscriberPort;

/** How long a key's channel stays subscribed after its last waiter: a busy key is not re-subscribed per wait. */
export const SUBSCRIPTION_LINGER = 2000;

interface Channel {
  readonly watches: Set<NotifiableWatch>;
  readonly subscribed: Promise<void>;
  /** `performance.now()` once the subscription was confirmed; cleared when the connection drops. */
  listeningSince?: number;
  /** `performance.now()` of the last notice for this process. */
  lastNotice?: number;
  /** Wakes the watches once a reservation for the process before us in the line has had its window. */
  relook?: NodeJS.Timeout;
  /** Unsubscribes the channel when nobody has watched it for the linger time. */
  idle?: NodeJS.Timeout;
}

/** How a {@link ReleaseSubscriber} listens, and how it reads the notices it hears (line/line-protocol.ts). */
export interface ReleaseSubscriberOptions {
  /** Use SSUBSCRIBE (RedisClientPort Cluster 7+) instead of SUBSCRIBE. @default false */
  readonly sharded?: boolean;
  /**
   * The store's owner id: a notice that names another owner (the key is reserved for that process, first in
   * the line) wakes nobody here; `*` (or anything else unnamed) wakes every waiter.
   */
  readonly owner?: string;
  /**
   * ms a channel stays subscribed after its last watch closed, so that a process waiting for the same key
   * again and again does not subscribe each time, and its next wait is covered from the start.
   */
  readonly linger?: number;
  /**
   * ms a reservation for another process lasts: a notice that names this process next in line wakes one of its
   * waiters once that is over (unless a later notice came first), so that a process that died first in line
   * costs the others one window, not their backoff. One request is enough to call the line again: it tells
   * the process whose turn it then is.
   */
  readonly handoffWindow?: number;
  /**
   * A notice `=version fence` on a channel: a release granted this process's waiter the lease directly (see
   * RELEASE). Returns whether the channel's waiters should wake to take it.
   */
  readonly onGrant?: (version: number, fence: number) => boolean;
}

/**
 * One subscriber connection per store, shared by every waiter of every key (on a Cluster: one client
 * whose sharded subscribers keep a connection to each master). Channels are counted by the watches on
 * them and unsubscribed when the last one closes. After a reconnect, or a Cluster's re-subscription on
 * a new topology, every watch is woken, since notices sent in between were lost.
 */
export class ReleaseSubscriber {
  private connection?: Client;
  private readonly channels = new Map<string, Channel>();
  /** The channels each open watch listens on. */
  private readonly channelsOf = new WeakMap<NotifiableWatch, readonly string[]>();
  /** How many times the connection dropped: a confirmation sent before the last drop confirms nothing. */
  private drops = 0;
  private everReady = false;
  /** Which master served each slot when the subscriptions were last known to be in place (RedisClientPort only). */
  private topology?: string;

  private readonly sharded: boolean;

  /**
   * @param connect opens the dedicated subscriber connection (owned and closed by this class); for a
   *   Cluster it must have ioredis' `shardedSubscribers` on, or SSUBSCRIBE goes to one random node
   */
  constructor(
    private readonly connect: () => Client,
    private readonly options: ReleaseSubscriberOptions = {},
  ) {
    this.sharded = options.sharded ?? false;
  }

  /** Whether this process currently listens on `channel` (so the releaser can discount itself). */
  isListening(channel: string): boolean {
    return this.channels.has(channel);
  }

  /**
   * Whether the server has confirmed our subscription to `channel` and it has not dropped since: a notice
   * published on it now reaches this process.
   */
  hears(channel: string): boolean {
    return this.channels.get(channel)?.listeningSince !== undefined;
  }

  /** How many watches of this process are open on `channel` (one per waiting queue of a manager). */
  watchers(channel: string): number {
    return this.channels.get(channel)?.watches.size ?? 0;
  }

  /**
   * Watches `channel` (or several channels, as one watch: woken by a notice on any). With `since` (a
   * `performance.now()` time), a notice heard since then counts as heard, and the watch's `listeningSince` says
   * from when on no notice can have been missed.
   */
  async watch(channel: string | readonly string[], since?: number): Promise<ReleaseWatch> {
    const names = typeof channel === 'string' ? [channel] : [...channel];
    const entries = names.map((name) => this.entryOf(name));
    const watch = new NotifiableWatch((closed) => names.forEach((name) => this.unwatch(name, closed)));
    this.channelsOf.set(watch, names);
    for (const entry of entries) entry.watches.add(watch);
    try {
      await Promise.all(entries.map((entry) => entry.subscribed));
    } catch (error) {
      names.forEach((name) => this.unwatch(name, watch));
      throw error;
    }
    if (since !== undefined && entries.some((entry) => entry.lastNotice !== undefined && entry.lastNotice >= since)) {
      watch.wake();
    }
    watch.listeningSince = this.coveredSince(names);
    return watch;
  }

  /** From when no notice on any of `names` can have been missed: when the last of them was subscribed. */
  private coveredSince(names: readonly string[]): number | undefined {
    let since = -Infinity;
    for (const name of names) {
      const start = this.channels.get(name)?.listeningSince;
      if (start === undefined) return undefined;
      since = Math.max(since, start);
    }
    return since;
  }

  /** The channel's entry, subscribed (or being subscribed), kept from going idle. */
  private entryOf(channel: string): Channel {
    const connection = this.ensureConnection();
    let entry = this.channels.get(channel);
    if (!entry) {
      const subscribing = this.sharded ? connection.ssubscribe(channel) : connection.subscribe(channel);
      const created: Channel = {
        watches: new Set(),
        subscribed: subscribing.then(() => {
          created.listeningSince = performance.now();
        }),
      };
      entry = created;
      this.channels.set(channel, created);
      created.subscribed.catch(() => this.channels.get(channel) === created && this.channels.delete(channel));
    }
    clearTimeout(entry.idle);
    entry.idle = undefined;
    return entry;
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    for (const entry of this.channels.values()) {
      clearTimeout(entry.idle);
      clearTimeout(entry.relook);
      for (const watch of entry.watches) watch.wake();
    }
    this.channels.clear();
    // not QUIT: it would queue behind a SUBSCRIBE still waiting for a server that is down, for as long as
    // the client's retries last (a minute with ioredis defaults), and a subscriber has no reply to wait for
    connection?.disconnect();
  }

  /** Wakes the watches of a channel on a notice for this process or for all; plans a re-look when we are next. */
  private hear(entry: Channel, message: string): void {
    clearTimeout(entry.relook);
    entry.relook = undefined;
    const notice = readNotice(message);
    if (notice.kind === 'granted') {
      if (this.options.onGrant?.(notice.version, notice.fence)) {
        entry.lastNotice = performance.now();
        this.wake(entry);
      }
      return;
    }
    if (notice.kind === 'reserved' && notice.owner !== this.options.owner) {
      if (notice.next !== undefined && notice.next === this.options.owner && (this.options.handoffWindow ?? 0) > 0) {
        entry.relook = setTimeout(() => this.relook(entry), (this.options.handoffWindow ?? 0) + 1);
        entry.relook.unref();
      }
      return;
    }
    entry.lastNotice = performance.now();
    if (notice.kind === 'reserved' && notice.count !== undefined) this.wakeLongestWaiting(entry, notice.count);
    else this.wake(entry);
  }

  private wake(entry: Channel): void {
    entry.relook = undefined;
    for (const watch of entry.watches) watch.wake();
  }

  /**
   * Permits were reserved for `count` of our places: of the watches asleep, the `count` open longest wake (each
   * permit waiter has its own, opened after its refusal took its place, so they are in the line's order); the
   * others would only ask again to be refused. A watch whose waiter is awake keeps the notice: its request may
   * have crossed the release that reserved its place, and a refusal must not send it back to sleep.
   */
  private wakeLongestWaiting(entry: Channel, count: number): void {
    let left = count;
    for (const watch of entry.watches) {
      if (!watch.asleep) watch.wake();
      else if (left-- > 0) watch.wake();
    }
  }

  /** The reservation before us had its window: the longest watch asks again (each permit waiter has its own). */
  private relook(entry: Channel): void {
    entry.relook = undefined;
    const [longest] = entry.watches;
    longest?.wake();
  }

  /** Notices may be lost from now on: no channel, and no watch on one, is covered any more. */
  private forgetCoverage(): void {
    this.drops++;
    for (const entry of this.channels.values()) {
      entry.listeningSince = undefined;
      // a waiter told of its turn by notices asks at its backoff again
      for (const watch of entry.watches) watch.listeningSince = undefined;
    }
  }

  /**
   * After a reconnect the client subscribes its channels again by itself (ioredis' `autoResubscribe`,
   * node-redis), but ioredis says nothing of when the server took them. Subscribing each channel once more gives
   * an answer to go by: on ioredis a SUBSCRIBE behind its own (the server and the client keep one
   * subscription), from whose reply on the channel's notices are heard; node-redis sends nothing for a channel it
   * has and answers at once, and its `ready` already came after the server answered its own re-subscription.
   * A waiter told of its turn can then sleep to `retry.maxDelay` again instead of asking at its backoff. It also
   * brings back the channels of an ioredis client that does not re-subscribe (`autoResubscribe: false`).
   */
  private confirmCoverage(connection: Client): void {
    const drops = this.drops;
    for (const [name, entry] of this.channels) {
      // in a task of its own: a client that throws must not throw into its own 'ready' event
      Promise.resolve()
        .then(() => connection.subscribe(name))
        .then(
          () => {
            if (this.drops !== drops || this.connection !== connection || this.channels.get(name) !== entry) return;
            entry.listeningSince ??= performance.now();
            for (const watch of entry.watches) {
              const names = this.channelsOf.get(watch);
              if (names) watch.listeningSince = this.coveredSince(names);
            }
          },
          // not confirmed (a timeout, a refusal): no cover on this channel, its waiters ask at their backoff
          () => undefined,
        );
    }
  }

  /** Wakes every watch: notices sent while a subscription was being re-established were lost. */
  private wakeAll(): void {
    for (const entry of this.channels.values()) for (const watch of entry.watches) watch.wake();
  }

  private unwatch(channel: string, watch: NotifiableWatch): void {
    const entry = this.channels.get(channel);
    if (!entry || !entry.watches.delete(watch) || entry.watches.size > 0) return;
    if ((this.options.linger ?? 0) > 0 && this.connection) {
      entry.idle = setTimeout(() => this.unsubscribe(channel, entry), this.options.linger ?? 0);
      entry.idle.unref();
    } else {
      this.unsubscribe(channel, entry);
    }
  }

  private unsubscribe(channel: string, entry: Channel): void {
    if (this.channels.get(channel) !== entry || entry.watches.size > 0) return;
    this.channels.delete(channel);
    clearTimeout(entry.relook);
    const connection = this.connection;
    if (!connection) return;
    const unsubscribe = this.sharded ? connection.sunsubscribe(channel) : connection.unsubscribe(channel);
    unsubscribe.catch(() => undefined);
  }

  private ensureConnection(): Client {
    if (this.connection) return this.connection;
    const connection = handleResubscriptions(this.connect());
    const onMessage = (channel: string | Buffer, message: string | Buffer): void => {
      const entry = this.channels.get(String(channel));
      if (entry) this.hear(entry, String(message));
    };
    connection.on(this.sharded ? 'smessage' : 'message', onMessage);
    // notices sent while the connection is down are lost: no channel is known to be covered any more
    connection.on('close', () => this.forgetCoverage());
    const resubscribed = (): void => {
      if (this.everReady) {
        this.forgetCoverage();
        this.wakeAll();
        // a Cluster's sharded subscribers re-subscribe on connections of their own, which report no order
        if (!this.sharded) this.confirmCoverage(connection);
      }
      this.everReady = true;
      this.topology = topologyOf(connection);
    };
    connection.on('ready', resubscribed);
    if (this.sharded) {
      // ioredis replaces a sharded subscriber whose connection ended (and one whose master no longer serves
      // its slots): notices on its slots may be lost from now on
      let replaced = false;
      connection.on('-subscriber', () => {
        replaced = true;
        this.forgetCoverage();
      });
      // the sharded subscribers follow a failover or resharding on their own and say so with this event,
      // which ioredis also emits after every failed attempt to reach a dead master (many per second):
      // wake the waiters once the slots have moved or a subscriber was replaced, not at each of those
      connection.on('subscribersReady', () => {
        if (this.everReady && (replaced || topologyOf(connection) !== this.topology)) resubscribed();
        replaced = false;
      });
    }
    // errors surface through the commands that fail; an unhandled 'error' event would crash the process
    connection.on('error', () => undefined);
    this.connection = connection;
    return connection;
  }
}

/** A compact description of which master serves which slots, to tell a topology change from a retry. */
function topologyOf(connection: Client): string | undefined {
  const slots = (connection as Partial<RedisClusterPort>).slots;
  if (slots === undefined) return undefined;
  let topology = '';
  let previous: string | undefined;
  for (let slot = 0; slot < slots.length; slot++) {
    const master = slots[slot]?.[0];
    if (master !== previous) topology += `${slot}:${master};`;
    previous = master;
  }
  return topology;
}
