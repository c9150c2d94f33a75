import { performance } from 'node:perf_hooks';
import type { ReleaseWatch } from '../../interfaces/lease.interface.js';
import { NotifiableWatch } from '../shared/notifiable-watch.js';
import type { PgListenClient } from './load-pg.js';
import { readReleaseNotice } from './release-notice.js';
import { endWithin } from './end-within.js';

/** How long a notice is remembered for a watch made after it (see `watch(notice, since)`). */
const NOTICE_MEMORY = 5000;
/** The most notices remembered at once: a burst of releases of distinct keys must not grow it without bound. */
const MAX_REMEMBERED = 10_000;
/** Reconnection delays of the LISTEN connection, in ms: doubled from the first to the last. */
const RECONNECT_FIRST = 100;
const RECONNECT_LAST = 5000;

/** Where a {@link PostgresListener} listens, and who it listens for. */
export interface PostgresListenerOptions {
  /** The store's LISTEN/NOTIFY channel. */
  readonly channel: string;
  /** The store's waiter id: a notice that names another process first in line wakes nobody here. */
  readonly waiter: string;
  /** How long a reservation for another process lasts, in ms: the next in line asks once it is over. */
  readonly handoffWindow: number;
}

/**
 * The store's one LISTEN connection: it hears the release notices of every key on the store's channel and
 * wakes the watches of the key each names, when the notice is for this process: one that names another
 * process first in line wakes nobody here (its waiters would only be refused), unless it names this process
 * next, which then asks once the hand-off window is over, should the first never come. A lost connection wakes every watch (a notice may have been
 * missed: their waiters ask again) and is made again while any watch is open. Without a connection, and in
 * polling mode (a pooler that keeps no session), watches hear nothing and their waiters poll, each sleep
 * bounded by the holder's lease and the manager's backoff.
 */
export class PostgresListener {
  private client?: Promise<PgListenClient | undefined>;
  private listeningSince?: number;
  private readonly watches = new Map<string, Set<NotifiableWatch>>();
  private readonly heard = new Map<string, number>();
  /** Per key: the look this process takes once the reservation for the process before it is over. */
  private readonly relooks = new Map<string, NodeJS.Timeout>();
  private reconnectDelay = RECONNECT_FIRST;
  private reconnectTimer?: NodeJS.Timeout;
  private closed = false;
  /** Set when notices cannot be heard where the store listens: every watch then polls. */
  polling = false;

  constructor(
    private readonly connect: () => Promise<PgListenClient>,
    private readonly options: PostgresListenerOptions,
  ) {}

  /** A watch of the key whose notice is `notice`; one heard since `since` (`performance.now()`) counts. */
  async watch(notice: string, since?: number): Promise<ReleaseWatch> {
    if (this.closed || this.polling) return NotifiableWatch.timerOnly();
    const client = await this.connected();
    const watch = new NotifiableWatch((closed) => this.forget(notice, closed));
    let watches = this.watches.get(notice);
    if (!watches) this.watches.set(notice, (watches = new Set()));
    watches.add(watch);
    if (client && this.listeningSince !== undefined) watch.listeningSince = this.listeningSince;
    const last = this.heard.get(notice);
    if (since !== undefined && last !== undefined && last >= since) watch.wake();
    return watch;
  }

  /** How many open watches hear the notices `notice` names. */
  watchers(notice: string): number {
    return this.watches.get(notice)?.size ?? 0;
  }

  /** Whether a notice sent now through `send` reaches this connection within `timeout` ms. */
  async hears(send: (notice: string) => Promise<unknown>, timeout: number): Promise<boolean> {
    const client = await this.connected();
    if (!client) return false;
    const notice = `probe:${Math.random().toString(36).slice(2)}`;
    const watch = await this.watch(notice);
    try {
      await send(notice);
      return await watch.next(timeout);
    } finally {
      watch.close();
    }
  }

  /** Why the LISTEN connection last failed to open, if it did (for the startup warning). */
  lastFailure?: unknown;

  /** Whether the LISTEN connection is up now (or comes up). */
  async ready(): Promise<boolean> {
    return (await this.connected()) !== undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    for (const relook of this.relooks.values()) clearTimeout(relook);
    this.relooks.clear();
    for (const watches of this.watches.values()) for (const watch of watches) watch.wake();
    this.watches.clear();
    this.heard.clear();
    const client = await this.client?.catch(() => undefined);
    this.client = undefined;
    if (client) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      await endWithin(client.end());
    }
  }

  private connected(): Promise<PgListenClient | undefined> {
    this.client ??= this.open();
    return this.client;
  }

  private async open(): Promise<PgListenClient | undefined> {
    let client: PgListenClient | undefined;
    try {
      client = await this.connect();
      client.on('notification', ({ channel, payload }) => {
        if (channel === this.options.channel && payload !== undefined) this.notice(payload);
      });
      client.on('error', () => this.lost(client));
      client.on('end', () => this.lost(client));
      await client.connect();
      await client.query(`LISTEN "${this.options.channel}"`);
      if (this.closed) throw new Error('closed');
      this.listeningSince = performance.now();
      this.reconnectDelay = RECONNECT_FIRST;
      // what was released while no connection listened is unknown: every waiter asks again
      this.wakeAll();
      this.lastFailure = undefined;
      return client;
    } catch (error) {
      this.lastFailure = error;
      if (client) {
        client.removeAllListeners();
        client.on('error', () => undefined);
        void client.end().catch(() => undefined);
      }
      this.client = undefined;
      this.scheduleReconnect();
      return undefined;
    }
  }

  private lost(client: PgListenClient | undefined): void {
    if (!client) return;
    const current = this.client;
    void current?.then((open) => {
      if (open !== client) return;
      this.client = undefined;
      this.listeningSince = undefined;
      client.removeAllListeners();
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
      this.wakeAll();
      this.scheduleReconnect();
    });
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer || this.watches.size === 0) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.watches.size > 0) void this.connected();
    }, this.reconnectDelay);
    this.reconnectTimer.unref();
    this.reconnectDelay = Math.min(this.reconnectDelay * 2, RECONNECT_LAST);
  }

  private notice(payload: string): void {
    const { key, first, next } = readReleaseNotice(payload);
    // a later notice of the key supersedes the look planned on an earlier one
    this.cancelRelook(key);
    if (first !== undefined && first !== this.options.waiter) {
      if (next === this.options.waiter) this.planRelook(key);
      return;
    }
    if (this.heard.size >= MAX_REMEMBERED) this.forgetOld();
    this.heard.delete(key);
    this.heard.set(key, performance.now());
    this.wakeKey(key);
  }

  /** This process stands next after a reservation: its waiters ask once the window is over (+1 ms: the server's clock passed it). */
  private planRelook(key: string): void {
    if (!this.watches.has(key)) return;
    const relook = setTimeout(() => {
      this.relooks.delete(key);
      this.wakeKey(key);
    }, this.options.handoffWindow + 1);
    relook.unref();
    this.relooks.set(key, relook);
  }

  private cancelRelook(key: string): void {
    const relook = this.relooks.get(key);
    if (relook === undefined) return;
    clearTimeout(relook);
    this.relooks.delete(key);
  }

  private wakeKey(key: string): void {
    for (const watch of this.watches.get(key) ?? []) watch.wake();
  }

  private forgetOld(): void {
    const horizon = performance.now() - NOTICE_MEMORY;
    for (const [notice, at] of this.heard) {
      if (at >= horizon && this.heard.size < MAX_REMEMBERED) break;
      this.heard.delete(notice);
    }
  }

  private wakeAll(): void {
    for (const watches of this.watches.values()) for (const watch of watches) watch.wake();
  }

  private forget(notice: string, watch: NotifiableWatch): void {
    const watches = this.watches.get(notice);
    watches?.delete(watch);
    if (watches?.size !== 0) return;
    this.watches.delete(notice);
    this.cancelRelook(notice);
  }
}
