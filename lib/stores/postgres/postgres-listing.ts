import { createHash } from 'node:crypto';
import type { LockListing, LockRevoking } from '../../interfaces/lock-listing.interface.js';
import type { LockListingPage, LockListingQuery, LockRevocation } from '../../interfaces/lock-listing.interface.js';
import type { PostgresPermitsContext } from './postgres-permits.js';
import { noticeOf } from './postgres-tables.js';
import { countWaitersSql, listKeysSql, revokeSql } from './sql/listing.sql.js';
import { lockKeySql, PERMITS_GUARD } from './sql/permits.sql.js';
import { readRecordSql } from './sql/records.sql.js';

/** How many lease rows one read of a page goes through at most. */
const ROWS_PER_READ = 1000;
/** How many reads one page takes at most: with `ROWS_PER_READ`, the bound on the work of one `keys` call. */
const MAX_READS_PER_PAGE = 8;
/** How long after the longest ended lease a revoked token is remembered for its holder's renewal, in ms. */
const REVOKED_KEPT_FOR = 60_000;

/** What the listing needs of its `PostgresLockStore`: the permits' view of it and its key prefix. */
export interface PostgresListingContext extends Omit<PostgresPermitsContext, 'handoffWindow' | 'listener'> {
  readonly keyPrefix: string;
}

/** The key's lease row as `lockKeySql` answers it, times in epoch ms. */
interface LockedRow {
  readonly token: string | null;
  readonly expires_at: string | null;
  readonly now: string;
}

/**
 * The operator's view of a Postgres store. Keys come from a keyset query over the lease rows in key order,
 * each read going through at most 1000 rows, at most 8 reads a page; the cursor is the last key read. A forced
 * release is one transaction that locks the key's lease row (as permit operations and grants do), ends its
 * mutex lease and permits, raises its fence and remembers the ended tokens in the records table for their
 * holders' next renewal.
 */
export class PostgresListing implements LockListing, LockRevoking {
  private readonly sql: {
    readonly listAt: string;
    readonly listAfter: string;
    readonly waiters: string;
    readonly lockKey: string;
    readonly revoke: string;
    readonly revoked: string;
  };

  constructor(private readonly context: PostgresListingContext) {
    const { tables } = context;
    this.sql = {
      listAt: listKeysSql(tables, 'at'),
      listAfter: listKeysSql(tables, 'after'),
      waiters: countWaitersSql(tables),
      lockKey: lockKeySql(tables),
      revoke: revokeSql(tables),
      revoked: readRecordSql(tables),
    };
  }

  async keys(query: LockListingQuery): Promise<LockListingPage> {
    const { keyPrefix } = this.context;
    const prefix = keyPrefix + (query.prefix ?? '');
    let from = query.cursor === undefined ? prefix : Buffer.from(query.cursor, 'base64url').toString('utf8');
    let sql = query.cursor === undefined ? this.sql.listAt : this.sql.listAfter;
    const keys: string[] = [];
    for (let reads = 0; reads < MAX_READS_PER_PAGE; reads++) {
      const wanted = query.limit - keys.length;
      const { rows } = await this.context.run('list', undefined, (pool) =>
        pool.query(sql, [from, prefix, ROWS_PER_READ, wanted]),
      );
      const read = rows[0] as { keys: string[]; scanned: number; last: string | null };
      keys.push(...read.keys.map((key) => key.slice(keyPrefix.length)));
      // a full page goes on after its last key; a read short of its rows reached the end of the table
      if (read.keys.length === wanted) return { keys, cursor: cursorOf(read.keys[read.keys.length - 1]) };
      if (read.scanned < ROWS_PER_READ || read.last === null) return { keys };
      [from, sql] = [read.last, this.sql.listAfter];
    }
    return { keys, cursor: cursorOf(from) };
  }

  async waiters(key: string): Promise<number> {
    const { rows } = await this.context.run('list', key, (pool) =>
      pool.query(this.sql.waiters, [this.context.stored(key)]),
    );
    return (rows[0] as { waiters: number }).waiters;
  }

  async revoke(key: string): Promise<LockRevocation> {
    const stored = this.context.stored(key);
    const { channel } = this.context.tables;
    return this.context.transaction('revoke', key, async (client) => {
      const locked = (await client.query(this.sql.lockKey, [stored])).rows[0] as LockedRow;
      const ends = Number(locked.expires_at ?? 0);
      const live = locked.token !== null && locked.token !== PERMITS_GUARD && ends > Number(locked.now);
      const { rows } = await client.query(this.sql.revoke, [
        stored,
        live ? locked.token : null,
        live ? ends : null,
        REVOKED_KEPT_FOR,
        channel,
        noticeOf(stored),
      ]);
      const row = rows[0] as { ended: number; fence: string };
      return { ended: row.ended, fence: Number(row.fence) };
    });
  }

  async wasRevoked(key: string, token: string): Promise<boolean> {
    const record = `revoked:${createHash('sha256')
      .update(`${this.context.stored(key)}\n${token}`)
      .digest('hex')}`;
    const { rows } = await this.context.run('inspect', key, (pool) => pool.query(this.sql.revoked, [record]));
    return rows.length > 0;
  }
}

/** A page's cursor: the stored key it stopped at, as text an operator can pass back. */
function cursorOf(storedKey: string): string {
  return Buffer.from(storedKey, 'utf8').toString('base64url');
}
