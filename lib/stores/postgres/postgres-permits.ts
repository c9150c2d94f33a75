import type { LeaseRenewal, ReleaseWatch } from '../../interfaces/lease.interface.js';
import type { PermitRequest, PermitResult, PermitState, PermitStore } from '../../interfaces/permit-store.interface.js';
import type { PostgresClientLike, PostgresPoolLike } from '../../interfaces/postgres-store-options.interface.js';
import { callLine, hasLapsed, type HeldPermit, type LineCall, type WaitingPlace } from '../shared/permit-line.js';
import { decidePermit } from '../shared/permit-decision.js';
import { checkPermitShape } from '../../options/permit-shape.js';
import type { PermitModeCode } from '../shared/permit-codes.js';
import { limitOfShape, modeOfCode, permitState } from '../shared/permit-state.js';
import type { PostgresListener } from './postgres-listener.js';
import { noticeOf, type PostgresTables } from './postgres-tables.js';
import {
  extendPermitsSql,
  leaseRowSql,
  lockKeySql,
  lockKeysSql,
  PERMITS_GUARD,
  readKeySql,
  writeKeySql,
} from './sql/permits.sql.js';
import { inlineSql } from './inline-sql.js';

/** What the Postgres permits need of their lock store: its connections, tables, keys and notices. */
export interface PostgresPermitsContext {
  readonly tables: PostgresTables;
  readonly handoffWindow: number;
  readonly listener: PostgresListener;
  /** Opens a transaction that the server ends when it waits for a lock or idles too long (see beginSql). */
  readonly begin: string;
  /** The key as stored (with the store's prefix). */
  stored(key: string): string;
  /** Runs `work` on a pooled connection of its own; failures become the store's errors. */
  session<T>(operation: string, key: string | undefined, work: (client: PostgresClientLike) => Promise<T>): Promise<T>;
  /** Runs `work` in one transaction on a pooled connection; failures become the store's errors. */
  transaction<T>(
    operation: string,
    key: string | undefined,
    work: (client: PostgresClientLike) => Promise<T>,
  ): Promise<T>;
  /** Runs `command` on the pool; failures become the store's errors. */
  run<T>(operation: string, key: string | undefined, command: (pool: PostgresPoolLike) => Promise<T>): Promise<T>;
}

/** A permit as held in the table, with when it entered (its row keeps its place in the line). */
interface StoredPermit extends HeldPermit {
  readonly since: number;
}

/** One key's permits, line and lease row, read under the lock of its lease row. */
interface Resource {
  shape: string;
  readonly permits: Map<string, StoredPermit>;
  line: Array<WaitingPlace & { since: number }>;
  /** The lease row: a mutex lease's token, the permits' guard, or none. */
  readonly lease: { readonly token: string | null; readonly expiresAt: number | null; fence: number };
  /** The live places of mutex waiters, first in line first. */
  readonly mutexLine: ReadonlyArray<{ readonly waiter: string; readonly reservedUntil: number | null }>;
  /** The server's clock, in epoch ms, once the row was locked. */
  readonly now: number;
}

/**
 * Semaphores and readers-writer locks on PostgreSQL, beside the leases of {@link PostgresLockStore}: the
 * contract of the Redis permits (ttls, tokens, fences shared with the key's mutex leases, a line served in
 * order with reservations for the hand-off window, notices), each operation one short transaction that
 * locks the key's lease row first, then reads and writes the key's rows of `<table>_permits`. The line is
 * called by the same rules as in memory and in Redis (permits/permit-line.ts).
 */
export class PostgresPermits implements PermitStore {
  readonly handoffWindow: number;

  constructor(private readonly context: PostgresPermitsContext) {
    this.handoffWindow = context.handoffWindow;
  }

  async acquire(request: PermitRequest): Promise<PermitResult> {
    const shape = checkPermitShape(request.shape);
    return this.operate('acquire', request.key, (resource, write) => {
      const { now } = resource;
      const decision = decidePermit(resource, request, shape, {
        now,
        window: this.handoffWindow,
        mutexTtl: this.mutexTtl(resource),
        nextFence: () => this.nextFence(resource),
        permit: (held) => ({ ...held, since: now }),
        place: (place) => ({ ...place, since: now }),
      });
      if (decision.changed) write(decision.line);
      return decision.result;
    });
  }

  async release(key: string, token: string): Promise<boolean> {
    return this.operate('release', key, (resource, write) => {
      const released = resource.permits.delete(token);
      write(this.callLine(resource, limitOfShape(resource.shape), this.mutexTtl(resource)));
      return released;
    });
  }

  async leaveLine(key: string, token: string): Promise<void> {
    await this.operate('leave the line of', key, (resource, write) => {
      resource.line = resource.line.filter((place) => place.token !== token);
      write(this.callLine(resource, limitOfShape(resource.shape), this.mutexTtl(resource)));
    });
  }

  async extend(key: string, token: string, ttl: number): Promise<boolean> {
    const [outcome] = await this.extendMany([{ key, token, ttl }]);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  /** Renews the batch in one transaction (the keys' lease rows locked in order first); on failure each entry gets the error. */
  async extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    if (renewals.length === 0) return [];
    const keys = renewals.map(({ key }) => this.context.stored(key));
    try {
      const renewed = await this.context.transaction(
        'renew',
        renewals.length === 1 ? renewals[0].key : undefined,
        async (client) => {
          await client.query(lockKeysSql(this.context.tables), [[...new Set(keys)]]);
          const { rows } = await client.query(extendPermitsSql(this.context.tables), [
            keys,
            renewals.map(({ token }) => token),
            renewals.map(({ ttl }) => ttl),
          ]);
          return new Set((rows as Array<{ position: string }>).map((row) => Number(row.position)));
        },
      );
      return renewals.map((_, index) => renewed.has(index + 1));
    } catch (error) {
      return renewals.map(() => error as Error);
    }
  }

  async inspect(key: string): Promise<PermitState> {
    return this.context.session('inspect', key, async (client) => {
      const stored = this.context.stored(key);
      const { tables } = this.context;
      const replies = (await client.query(
        `${inlineSql(leaseRowSql(tables), [stored])}; ${inlineSql(readKeySql(tables), [stored])}`,
      )) as unknown as Array<{ rows: unknown[] }>;
      const resource = this.resourceOf(replies[0].rows[0] as LeaseRow | undefined, replies[1].rows as PermitRow[]);
      const { now } = resource;
      const permits = [...resource.permits.values()]
        .sort((a, b) => a.expiresAt - b.expiresAt)
        .map((permit) => ({
          ...(permit.mode === 'p' ? {} : { mode: modeOfCode(permit.mode) }),
          remainingTtl: Math.max(0, Math.ceil(permit.expiresAt - now)),
          ...(permit.fence !== undefined ? { fence: permit.fence } : {}),
          ...(permit.holder !== undefined ? { holder: permit.holder } : {}),
        }));
      const waiting = resource.line.filter((place) => !hasLapsed(place, now)).length;
      const fence = resource.lease.fence > 0 ? resource.lease.fence : undefined;
      return permitState({ shape: resource.shape || undefined, permits, waiting, fence });
    });
  }

  watch(key: string, since?: number): Promise<ReleaseWatch> {
    return this.context.listener.watch(noticeOf(this.context.stored(key)), since);
  }

  /** The lock store closes the connections these share. */
  async close(): Promise<void> {}

  /**
   * One permit operation on `key` in one transaction of two round trips: `BEGIN` with the server's bounds, the
   * lock of the key's lease row and the read of its rows in one message, then `decide` (which calls `write`
   * with the line it called, if the key is to be written back), then the write and `COMMIT` in one message.
   * The row stays locked between the two: if this process stalls or is cut off there, the server ends the
   * transaction (nothing of it written) after the bound, and this call fails as the store's error.
   */
  private operate<T>(
    operation: string,
    key: string,
    decide: (resource: Resource, write: (line: LineCall | undefined) => void) => T,
  ): Promise<T> {
    const { tables } = this.context;
    const stored = this.context.stored(key);
    return this.context.session(operation, key, async (client) => {
      try {
        const replies = (await client.query(
          `${this.context.begin}; ${inlineSql(lockKeySql(tables), [stored])}; ${inlineSql(readKeySql(tables), [stored])}`,
        )) as unknown as Array<{ rows: unknown[] }>;
        // the lock's and the read's replies come last, after those of BEGIN and its settings
        const [locked, read] = replies.slice(-2);
        const resource = this.resourceOf(locked.rows[0] as LeaseRow, read.rows as PermitRow[]);
        let written: string | undefined;
        const result = decide(resource, (line) => (written = this.writeSql(stored, resource, line)));
        await client.query(written === undefined ? 'COMMIT' : `${written}; COMMIT`);
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  /** A key's permits, line and mutex waiters from its lease row and rows; ended ones are left out. */
  private resourceOf(row: LeaseRow | undefined, all: readonly PermitRow[]): Resource {
    const now = Number(row?.now ?? Date.now());
    const resource: Resource = {
      shape: '',
      permits: new Map(),
      line: [],
      lease: {
        token: row?.token ?? null,
        expiresAt: row?.expires_at === null || row?.expires_at === undefined ? null : Number(row.expires_at),
        fence: Number(row?.fence ?? 0),
      },
      mutexLine: all
        .filter((place) => place.kind === 'mutex')
        .map((place) => ({
          waiter: place.token,
          reservedUntil: place.reserved_until === null ? null : Number(place.reserved_until),
        })),
      now,
    };
    for (const permit of all) {
      if (permit.kind === 'mutex') continue;
      const expiresAt = Number(permit.expires_at);
      if (expiresAt <= now) continue;
      resource.shape = permit.shape;
      if (permit.waiting) {
        resource.line.push({
          token: permit.token,
          mode: permit.mode,
          until: expiresAt,
          reservedUntil: permit.reserved_until === null ? 0 : Number(permit.reserved_until),
          since: Number(permit.since),
        });
      } else {
        resource.permits.set(permit.token, {
          mode: permit.mode,
          expiresAt,
          since: Number(permit.since),
          ...(permit.fence === null ? {} : { fence: Number(permit.fence) }),
          ...(permit.holder === null ? {} : { holder: permit.holder }),
        });
      }
    }
    return resource;
  }

  /**
   * Writes the resource back: its permits and places, the lease row's guard (until the last permit ends) and
   * fence; tells the waiters when the line reserved permits, and calls the first mutex waiter once the last
   * permit of a key it waits for has ended.
   */
  private writeSql(stored: string, resource: Resource, line: LineCall | undefined): string {
    const { tables, handoffWindow } = this.context;
    const rows = [
      ...[...resource.permits].map(([token, permit]) => ({
        token,
        mode: permit.mode,
        waiting: false,
        expiresAt: permit.expiresAt,
        since: permit.since,
        reservedUntil: null as number | null,
        holder: permit.holder ?? null,
        fence: permit.fence ?? null,
      })),
      ...resource.line.map((place) => ({
        token: place.token,
        mode: place.mode,
        waiting: true,
        expiresAt: place.until,
        since: place.since,
        reservedUntil: place.reservedUntil > 0 ? place.reservedUntil : null,
        holder: null,
        fence: null,
      })),
    ];
    const { lease } = resource;
    const guarded = lease.token === PERMITS_GUARD && (lease.expiresAt ?? 0) > resource.now;
    const mutexHeld = lease.token !== null && !guarded && (lease.expiresAt ?? 0) > resource.now;
    const lastEnd = Math.max(0, ...[...resource.permits.values()].map((permit) => permit.expiresAt));
    const guard = lastEnd > 0 ? PERMITS_GUARD : null;
    // once the last permit ended, the mutex waiter first in line gets the key for the hand-off window
    const [head] = resource.mutexLine;
    const called = !mutexHeld && guard === null && head !== undefined && head.reservedUntil === null;
    return inlineSql(writeKeySql(tables), [
      stored,
      resource.shape || 'rw',
      rows.map((row) => ({
        t: row.token,
        m: row.mode,
        w: row.waiting,
        e: row.expiresAt,
        s: row.since,
        r: row.reservedUntil,
        h: row.holder,
        f: row.fence,
      })),
      !mutexHeld,
      guard,
      guard === null ? null : lastEnd,
      lease.fence,
      called ? head.waiter : null,
      handoffWindow,
      tables.channel,
      noticeOf(stored),
      called || (line !== undefined && line.reserved > 0),
    ]);
  }

  /** The next fence of the key: above the last one granted to a permit or a mutex lease, and at or above the clock in µs. */
  private nextFence(resource: Resource): number {
    const fence = Math.max(resource.lease.fence + 1, Math.floor(resource.now * 1000));
    resource.lease.fence = fence;
    return fence;
  }

  /** For how many ms something holds the key against permits: a mutex lease, or a mutex caller waiting. */
  private mutexTtl(resource: Resource): number | undefined {
    const { lease, now, mutexLine } = resource;
    if (lease.token !== null && lease.token !== PERMITS_GUARD && (lease.expiresAt ?? 0) > now) {
      return lease.expiresAt! - now;
    }
    const [head] = mutexLine;
    if (!head) return undefined;
    if (head.reservedUntil !== null) return Math.max(0, head.reservedUntil - now);
    const lastEnd = Math.max(now, ...[...resource.permits.values()].map((permit) => permit.expiresAt));
    return lastEnd - now + this.handoffWindow;
  }

  private callLine(resource: Resource, limit: number | undefined, mutexTtl: number | undefined): LineCall {
    return callLine(resource.permits, resource.line, {
      limit,
      window: this.handoffWindow,
      exclusive: mutexTtl !== undefined,
      now: resource.now,
    });
  }
}

/** A key's lease row as the lock reads it, with the server's clock. */
interface LeaseRow {
  readonly token: string | null;
  readonly expires_at: number | string | null;
  readonly fence: string;
  readonly now: number | string;
}

/** A row of `<table>_permits` as read. */
interface PermitRow {
  /** A permit or place of `<table>_permits`, or a place of a mutex waiter (`token` is then its waiter id). */
  readonly kind: 'permit' | 'mutex';
  readonly token: string;
  readonly shape: string;
  readonly mode: PermitModeCode;
  readonly waiting: boolean;
  readonly expires_at: number;
  readonly since: number;
  readonly reserved_until: number | null;
  readonly holder: string | null;
  readonly fence: string | null;
}
