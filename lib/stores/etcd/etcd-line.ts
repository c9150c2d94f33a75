import { newOwnerId } from '../../utils/owner-id.js';
import { performance } from 'node:perf_hooks';
import type { EtcdCompare, EtcdRequestOp, EtcdTxnRequest } from './etcd-client.js';
import type { EtcdMembers } from './etcd-members.js';
import type { EtcdKeepAlives } from './etcd-keep-alives.js';
import { lineEntry, type EtcdResourceKeys } from './etcd-keys.js';

/** A place this process holds in one resource's line. */
interface Place {
  readonly entry: Buffer;
  /** The entry's `create_revision`: its rank in the line. */
  revision?: string;
  /** `performance.now()` after which the wait that took it is over, and the place is given up. */
  until: number;
}

/** How long a place outlives the wait that took it, for the waiter's last attempt to still count. */
const PLACE_GRACE = 1000;

/**
 * This process's places in the lines of waiting processes, one line per resource, as etcd's concurrency
 * recipes order waiters: by the `create_revision` of each waiter's key. Every place is attached to one
 * session lease per store, kept alive while the store stands in some line: when the process dies, its places
 * go with the session, within `sessionTtl` seconds. A place whose wait is over goes even when nobody says so.
 */
export class EtcdLine {
  /** This store's name in every line: 16 hex digits, never a token. */
  readonly owner = newOwnerId();
  private readonly places = new Map<string, Place>();
  /**
   * Places given up whose deletion failed, by resource: each tick deletes them again, as they would keep every
   * other process of that resource waiting for as long as the session lives (while we wait for other keys).
   */
  private readonly leftOver = new Map<string, Buffer>();
  private session?: Promise<string>;
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly members: () => Promise<EtcdMembers>,
    private readonly keepAlives: EtcdKeepAlives,
    private readonly sessionTtl: number,
  ) {}

  /**
   * The comparison that lets this process take a free key: nobody stands in its line, or nobody stands
   * ahead of our own place.
   */
  gate(keys: EtcdResourceKeys): EtcdCompare {
    const place = this.places.get(id(keys));
    if (place?.revision === undefined) {
      return { key: keys.line, range_end: keys.lineEnd, target: 'Create', result: 'Less', create_revision: 1 };
    }
    // every entry's create_revision is at least ours: ours is the oldest
    const before = (BigInt(place.revision) - 1n).toString();
    return { key: keys.line, range_end: keys.lineEnd, target: 'Create', result: 'Greater', create_revision: before };
  }

  /** The operation that leaves the line with a grant (a no-op when we had no place). */
  leaveOp(keys: EtcdResourceKeys): EtcdRequestOp {
    return { request_delete_range: { key: lineEntry(keys, this.owner) } };
  }

  /** The operation that takes a place in the line unless we already have one, and tells its revision. */
  async joinOp(keys: EtcdResourceKeys): Promise<EtcdRequestOp> {
    // a place left over here is taken back by this join, not deleted by the next round (one on its way may
    // still delete it: the line's order is then lost for this wait, never the key's one holder)
    this.leftOver.delete(id(keys));
    const lease = await this.sessionLease();
    const entry = lineEntry(keys, this.owner);
    return {
      request_txn: {
        compare: [{ key: entry, target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key: entry, value: Buffer.alloc(0), lease } }],
        failure: [{ request_range: { key: entry } }],
      },
    };
  }

  /** Our own entry's key in a resource's line. */
  entryOf(keys: EtcdResourceKeys): Buffer {
    return lineEntry(keys, this.owner);
  }

  /** Drops the session whose lease etcd no longer knows; the next join grants a new one. */
  resetSession(): void {
    this.session = undefined;
    this.places.clear();
  }

  /** Records the place a refused attempt took (or confirmed), until `until`. */
  joined(keys: EtcdResourceKeys, revision: string | undefined, waitFor: number): void {
    const until = performance.now() + waitFor + PLACE_GRACE;
    // a place left over is ours again (a join finds it and keeps it)
    this.leftOver.delete(id(keys));
    const known = this.places.get(id(keys));
    if (known) {
      known.until = Math.max(known.until, until);
      known.revision = revision ?? known.revision;
    } else {
      this.places.set(id(keys), { entry: lineEntry(keys, this.owner), revision, until });
    }
    this.arm();
  }

  /** Forgets a place the server no longer has (we were granted, or it went with an earlier session). */
  forget(keys: EtcdResourceKeys): void {
    this.places.delete(id(keys));
  }

  /**
   * Whether a place created at `createRevision` stands ahead of ours (every place does while we have none
   * whose rank we know; ours does not).
   */
  isAhead(keys: EtcdResourceKeys, createRevision: string): boolean {
    const ours = this.places.get(id(keys))?.revision;
    return ours === undefined || BigInt(createRevision) < BigInt(ours);
  }

  /** Whether we stand in the resource's line. */
  has(keys: EtcdResourceKeys): boolean {
    return this.places.has(id(keys));
  }

  /** Gives up our place in a resource's line. */
  async leave(keys: EtcdResourceKeys): Promise<void> {
    const place = this.places.get(id(keys));
    if (!place) return;
    this.places.delete(id(keys));
    try {
      const members = await this.members();
      await members.call((client) => client.kv.txn(dropTxn(place.entry)));
    } catch (error) {
      this.leftOver.set(id(keys), place.entry);
      this.arm();
      throw error;
    }
  }

  /** Gives up every place (the session's revocation deletes them on the server). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.places.clear();
    this.leftOver.clear();
    const session = this.session;
    this.session = undefined;
    if (!session) return;
    const lease = await session.catch(() => undefined);
    if (lease === undefined) return;
    const members = await this.members();
    await members.call((client) => client.leaseClient.leaseRevoke({ ID: lease })).catch(() => undefined);
  }

  private sessionLease(): Promise<string> {
    if (this.session) return this.session;
    const granting = this.members().then(
      async (members) => (await members.call((client) => client.leaseClient.leaseGrant({ TTL: this.sessionTtl }))).ID,
    );
    this.session = granting;
    granting.catch(() => {
      if (this.session === granting) this.session = undefined;
    });
    this.arm();
    return granting;
  }

  /** Keeps the session alive at a third of its TTL while we stand in a line, and gives up places whose wait is over. */
  private arm(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => void this.tick(), (this.sessionTtl * 1000) / 3);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    const now = performance.now();
    const members = await this.members().catch(() => undefined);
    for (const [key, place] of this.places) {
      if (place.until > now) continue;
      this.places.delete(key);
      this.leftOver.set(key, place.entry);
    }
    for (const [key, entry] of this.leftOver) {
      // kept until deleted, or until the session's expiry removes it
      void members
        ?.call((client) => client.kv.txn(dropTxn(entry)))
        .then(() => this.leftOver.get(key) === entry && this.leftOver.delete(key))
        .catch(() => undefined);
    }
    const session = this.session;
    if (!session) return;
    if (this.places.size === 0) {
      // nothing to keep: the session runs out by itself (not revoked: a join may be on its way with it), and
      // the next wait gets a new one; its expiry removes the places left over
      this.session = undefined;
      this.leftOver.clear();
      return;
    }
    const lease = await session.catch(() => undefined);
    if (lease === undefined) return;
    const [ttl] = await this.keepAlives.renew([lease]);
    if (ttl === 0 && this.session === session) {
      // the session expired (a long partition): its places are gone from the server, so ours are too
      this.session = undefined;
      this.places.clear();
      this.leftOver.clear();
      return;
    }
    this.arm();
  }
}

/** Deletes a place in a line. */
function dropTxn(entry: Buffer): EtcdTxnRequest {
  return { compare: [], success: [{ request_delete_range: { key: entry } }], failure: [] };
}

function id(keys: EtcdResourceKeys): string {
  return keys.room.toString('latin1');
}
