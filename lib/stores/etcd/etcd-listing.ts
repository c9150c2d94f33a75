import type { LockListing, LockRevoking } from '../../interfaces/lock-listing.interface.js';
import type { LockListingPage, LockListingQuery, LockRevocation } from '../../interfaces/lock-listing.interface.js';
import { LockStoreError } from '../../errors/lock-store.error.js';
import type { Etcd3Client, EtcdKeyValue, EtcdRequestOp } from './etcd-client.js';
import { etcdResourceKeys, etcdRevokedKey, type EtcdResourceKeys } from './etcd-keys.js';
import { remainingLease } from './etcd-lease-remaining.js';
import type { EtcdRecordsContext } from './etcd-records.js';
import { revokeLease } from './etcd-spare-lease.js';

/** How many keys one range read of a page goes through at most (keys only, no values). */
const KEYS_PER_READ = 1000;
/** How many range reads one page takes at most: with `KEYS_PER_READ`, the bound on the work of one call. */
const MAX_READS_PER_PAGE = 8;
/** How long after the ended lease a revoked token is remembered for its holder's renewal, in ms. */
const REVOKED_KEPT_FOR = 60_000;
/** How often a forced release reads the key again when a grant or release moved it in between. */
const REVOKE_ATTEMPTS = 5;
/** The part of a room that holds the lease. */
const LOCK_PART = Buffer.from('/lock', 'utf8');
/** Every room's name starts with the digits of its key's length, then ':'. */
const FIRST_DIGIT = Buffer.from('0', 'utf8');
const AFTER_DIGITS = Buffer.from(':', 'utf8');

/**
 * The operator's view of an etcd store. A room's name starts with the byte length of its key, so keys that
 * share a prefix are not next to each other: a page reads the rooms in etcd's key order from where the last
 * one stopped, keys only, at most 1000 a read and 8 reads a page, and keeps each room's `/lock` whose key starts
 * with the prefix. The cursor is the last etcd key read.
 *
 * A forced release deletes the lease's key and holder record, writes the fence key and remembers the ended
 * token (on an etcd lease of its own, until 60 s past the ended lease) in one transaction, compared on the
 * lease key's `mod_revision` as read just before: the fence is that transaction's revision, above every fence
 * granted before, and below the revision of any later grant.
 */
export class EtcdListing implements LockListing, LockRevoking {
  constructor(private readonly context: EtcdRecordsContext) {}

  async keys(query: LockListingQuery): Promise<LockListingPage> {
    const prefix = Buffer.from(this.context.prefix(), 'utf8');
    // the rooms, and only they: their names start with a digit
    const end = Buffer.concat([prefix, AFTER_DIGITS]);
    let last = query.cursor === undefined ? undefined : Buffer.from(query.cursor, 'base64url');
    const keys: string[] = [];
    return this.context.run('list', undefined, async (client) => {
      for (let reads = 0; reads < MAX_READS_PER_PAGE; reads++) {
        const from = last === undefined ? Buffer.concat([prefix, FIRST_DIGIT]) : after(last);
        const read = await readRange(client, { key: from, range_end: end, limit: KEYS_PER_READ, keys_only: true });
        for (const { key: name } of read.kvs) {
          const key = lockKeyOf(name, prefix.length);
          if (key === undefined || !key.startsWith(query.prefix ?? '')) continue;
          keys.push(key);
          if (keys.length === query.limit) return { keys, cursor: cursorOf(name) };
        }
        if (!read.more || read.kvs.length === 0) return { keys };
        last = Buffer.from(read.kvs[read.kvs.length - 1].key);
      }
      return { keys, cursor: cursorOf(last as Buffer) };
    });
  }

  /** How many processes stand in the key's line (one place per store). */
  async waiters(key: string): Promise<number> {
    const keys = this.keysOf(key);
    return this.context.run('list', key, async (client) => {
      const read = await readRange(client, { key: keys.line, range_end: keys.lineEnd, count_only: true });
      return Number(read.count ?? 0);
    });
  }

  async revoke(key: string): Promise<LockRevocation> {
    const keys = this.keysOf(key);
    const revoked = etcdRevokedKey(this.context.prefix(), key);
    return this.context.run('revoke', key, async (client) => {
      for (let attempt = 0; attempt < REVOKE_ATTEMPTS; attempt++) {
        const [lease] = (await readRange(client, { key: keys.lock })).kvs;
        const outcome = lease ? await revokeHeld(client, keys, lease, revoked) : await raiseFree(client, keys);
        if (outcome) return outcome;
      }
      throw new LockStoreError('revoke', key, undefined, `the key changed under ${REVOKE_ATTEMPTS} attempts in a row`);
    });
  }

  async wasRevoked(key: string, token: string): Promise<boolean> {
    const revoked = etcdRevokedKey(this.context.prefix(), key);
    return this.context.run('inspect', key, async (client) => {
      const [record] = (await readRange(client, { key: revoked })).kvs;
      return record !== undefined && Buffer.from(record.value).toString('utf8') === token;
    });
  }

  private keysOf(key: string): EtcdResourceKeys {
    return etcdResourceKeys(this.context.prefix(), key);
  }
}

/** Ends the lease `lease` of the key while it still stands as read; `undefined` when it moved meanwhile. */
async function revokeHeld(
  client: Etcd3Client,
  keys: EtcdResourceKeys,
  lease: EtcdKeyValue,
  revoked: Buffer,
): Promise<LockRevocation | undefined> {
  const remaining = (await remainingLease(client, lease.lease)) ?? 0;
  const { ID } = await client.leaseClient.leaseGrant({ TTL: Math.ceil((remaining + REVOKED_KEPT_FOR) / 1000) });
  let done = false;
  try {
    const reply = await client.kv.txn({
      compare: [{ key: keys.lock, target: 'Mod', result: 'Equal', mod_revision: lease.mod_revision }],
      success: [
        { request_delete_range: { key: keys.lock } },
        { request_delete_range: { key: keys.holder } },
        { request_put: { key: keys.fence, value: Buffer.alloc(0) } },
        { request_put: { key: revoked, value: Buffer.from(lease.value), lease: ID } },
      ],
      failure: [],
    });
    done = reply.succeeded;
    return done ? { ended: 1, fence: Number(reply.header.revision) } : undefined;
  } finally {
    // a lease that remembers nothing would live its minute for nothing
    if (!done) revokeLease(client, ID);
  }
}

/** Raises the fence of a free key while it stays free; `undefined` when a grant came in between. */
async function raiseFree(client: Etcd3Client, keys: EtcdResourceKeys): Promise<LockRevocation | undefined> {
  const reply = await client.kv.txn({
    compare: [{ key: keys.lock, target: 'Create', result: 'Equal', create_revision: 0 }],
    success: [{ request_put: { key: keys.fence, value: Buffer.alloc(0) } }],
    failure: [],
  });
  return reply.succeeded ? { ended: 0, fence: Number(reply.header.revision) } : undefined;
}

/** One range read, in a transaction of one operation (the client's `kv.txn` is the call the store routes). */
async function readRange(client: Etcd3Client, range: NonNullable<EtcdRequestOp['request_range']>) {
  const reply = await client.kv.txn({ compare: [], success: [{ request_range: range }], failure: [] });
  return reply.responses[0]?.response_range ?? { kvs: [] };
}

/**
 * The user key of a room's lease key (`<prefix><byte length>:<key>/lock`), `undefined` for any other key of a
 * room (holder record, fence, line places).
 */
function lockKeyOf(name: Buffer, prefixLength: number): string | undefined {
  const stored = Buffer.from(name);
  const colon = stored.indexOf(AFTER_DIGITS, prefixLength);
  const digits = stored.subarray(prefixLength, Math.max(colon, prefixLength)).toString('latin1');
  if (!/^\d+$/.test(digits)) return undefined;
  const start = colon + 1;
  const length = Number(digits);
  const part = stored.subarray(start + length);
  return part.equals(LOCK_PART) ? stored.subarray(start, start + length).toString('utf8') : undefined;
}

/** The smallest etcd key after `name`. */
function after(name: Buffer): Buffer {
  return Buffer.concat([Buffer.from(name), Buffer.from([0])]);
}

/** A page's cursor: the etcd key it stopped at, as text an operator can pass back. */
function cursorOf(name: Buffer): string {
  return Buffer.from(name).toString('base64url');
}
