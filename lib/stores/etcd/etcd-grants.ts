import { performance } from 'node:perf_hooks';
import type { AcquireRequest, AcquireResult } from '../../interfaces/lease.interface.js';
import type { HandOverResult } from '../../interfaces/waiting-line.interface.js';
import type { EtcdKeyValue, EtcdResponseOp, EtcdTxnResponse, Etcd3Client } from './etcd-client.js';
import type { EtcdKeepAlives } from './etcd-keep-alives.js';
import type { EtcdResourceKeys } from './etcd-keys.js';
import type { EtcdLeaseBook } from './etcd-lease-book.js';
import type { EtcdLeasePool } from './etcd-lease-pool.js';
import { remainingLease } from './etcd-lease-remaining.js';
import type { EtcdLine } from './etcd-line.js';
import { leaseSeconds } from './etcd-options.js';
import type { EtcdRefusals } from './etcd-refusals.js';
import { keepSpare, revokeLease } from './etcd-spare-lease.js';
import { grantTxn, handOverTxn } from './etcd-transactions.js';

/** A grant: on `lease` (ours, or the lease of an earlier grant whose reply was lost), `seconds` long. */
interface Granted {
  readonly acquired: true;
  readonly lease: string;
  readonly seconds: number;
  readonly result: AcquireResult;
}

/** A refusal: the answer for the caller. */
interface Refused {
  readonly acquired: false;
  readonly result: AcquireResult;
}

/** What one grant transaction came to; `stale-line` when only our outdated idea of the line refused us. */
type GrantOutcome = Granted | Refused | 'stale-line';

/** What grants need of their store. */
export interface EtcdGrantsDeps {
  readonly line: EtcdLine;
  readonly keepAlives: EtcdKeepAlives;
  readonly pool: EtcdLeasePool;
  readonly book: EtcdLeaseBook;
  readonly refusals: EtcdRefusals;
  /** Gives up our place in the line of `key`. */
  readonly leaveLine: (key: string) => Promise<void>;
}

/**
 * Grant transactions of one etcd store, each on a lease from the pool: a grant while the key is free and nobody
 * waits ahead of us (else the holder's remaining lease and, for a caller that waits, a place in the line), and
 * a hand-over, which releases a lease and grants the key to the next waiter in one step.
 */
export class EtcdGrants {
  constructor(private readonly deps: EtcdGrantsDeps) {}

  /**
   * Grants `request` on a lease from the pool (asking once more when only a stale idea of the line refused
   * it) and records the grant in the book; a refused attempt's lease goes back to the pool.
   */
  async acquire(client: Etcd3Client, request: AcquireRequest, keys: EtcdResourceKeys): Promise<AcquireResult> {
    const { pool, book } = this.deps;
    const seconds = leaseSeconds(request.ttl);
    const { lease: pooled, renewed } = await pool.take(seconds);
    let outcome;
    try {
      outcome = await this.attempt(client, request, keys, pooled.id);
      if (outcome === 'stale-line') outcome = await this.attempt(client, request, keys, pooled.id);
      // a grant counts once its lease lasts its whole TTL from this attempt on
      if (outcome !== 'stale-line' && outcome.acquired && outcome.lease === pooled.id) await renewed;
    } catch (error) {
      // a failed transaction may still have been applied, or its lease not renewed: the lease goes, and with
      // it whatever it holds
      revokeLease(client, pooled.id);
      throw error;
    }
    if (outcome === 'stale-line' || !outcome.acquired) {
      // refused: the lease holds nothing, and serves the next attempt once renewed
      keepSpare(pool, client, { lease: pooled, renewed, seconds });
      return outcome === 'stale-line' ? { acquired: false, remainingTtl: undefined } : outcome.result;
    }
    if (outcome.lease === pooled.id) {
      book.record(request.token, { id: pooled.id, seconds, until: pooled.until });
    } else {
      // our earlier grant stood, on its own lease
      const until = performance.now() + outcome.seconds * 1000;
      book.record(request.token, { id: outcome.lease, seconds: outcome.seconds, until });
      keepSpare(pool, client, { lease: pooled, renewed, seconds });
    }
    return outcome.result;
  }

  /**
   * While `token` holds the key, grants it to `next` in the same transaction, on a lease from the pool, when
   * nobody waits ahead of us; else only releases it. The released lease goes back to the pool.
   */
  async handOver(
    client: Etcd3Client,
    keys: EtcdResourceKeys,
    token: string,
    next: AcquireRequest,
  ): Promise<HandOverResult> {
    const { pool, line, book } = this.deps;
    const seconds = leaseSeconds(next.ttl);
    const { lease: pooled, renewed } = await pool.take(seconds);
    const lease = pooled.id;
    // a hand-over that fails may have been applied, now or later: the waiter, told nothing was handed over,
    // asks with its token and is granted again on this lease, which a revocation would then end; so the lease
    // is not revoked (nor pooled) but runs out by its TTL
    const plan = { lease, gate: line.gate(keys), leave: line.leaveOp(keys) };
    const reply = await client.kv.txn(handOverTxn(keys, token, next, plan));
    const old = book.end(token);
    const revision = handedOverAt(reply, lease, next.token);
    if (
      revision !== undefined &&
      !(await renewed.then(
        () => true,
        () => false,
      ))
    ) {
      // handed over on a lease that could not be renewed: revoking it frees the key, which was ours; the next
      // waiter asks by itself, once the revocation is through (asking before, it could be granted again on
      // the lease the revocation then ends)
      await client.leaseClient.leaseRevoke({ ID: lease }).catch(() => undefined);
      if (old) pool.give(old, old.seconds);
      return { released: true, handedOver: false };
    }
    if (revision !== undefined) {
      line.forget(keys);
      book.record(next.token, { id: lease, seconds, until: pooled.until });
      if (old) pool.give(old, old.seconds);
      return next.fencing
        ? { released: true, handedOver: true, fence: Number(revision) }
        : { released: true, handedOver: true };
    }
    // the lease holds nothing: not even a copy of this hand-over sent before, whose reply was lost
    keepSpare(pool, client, { lease: pooled, renewed, seconds });
    const released = reply.responses[0].response_txn?.succeeded === true;
    if (released && old) pool.give(old, old.seconds);
    return released ? { released: true, handedOver: false } : { released: false, handedOver: false };
  }

  /**
   * One grant transaction on the lease `lease`. Refused: the holder's remaining lease, and a place in the line
   * when the caller waits; `stale-line` when only our outdated idea of the line refused us (ask once more).
   */
  private async attempt(
    client: Etcd3Client,
    request: AcquireRequest,
    keys: EtcdResourceKeys,
    lease: string,
  ): Promise<GrantOutcome> {
    const { line } = this.deps;
    const sentAt = performance.now();
    const join = request.waiting ? await line.joinOp(keys) : undefined;
    const hadPlace = line.has(keys);
    const plan = { lease, gate: line.gate(keys), leave: line.leaveOp(keys), join };
    const reply = await client.kv.txn(grantTxn(keys, request, plan));
    if (reply.succeeded) {
      line.forget(keys);
      return {
        acquired: true,
        lease,
        seconds: leaseSeconds(request.ttl),
        result: granted(request, reply.header.revision),
      };
    }
    const [current] = reply.responses[0].response_range?.kvs ?? [];
    const [fence] = reply.responses[1].response_range?.kvs ?? [];
    const [head] = reply.responses[2].response_range?.kvs ?? [];
    if (current && Buffer.from(current.value).toString('utf8') === request.token) {
      // our own grant, whose reply was lost: refresh it, so it lasts its ttl from this attempt on
      return this.regranted(request, keys, current, fence);
    }
    if (request.waiting) {
      line.joined(keys, joinedRevision(reply.responses[3]), request.waiting.ttl);
      this.deps.refusals.remember(keys, { revision: reply.header.revision, at: sentAt });
    }
    if (!current) {
      // free, yet refused by the line: by a waiter ahead of us, or by our own place as we remembered it wrongly
      const headIsOurs = head !== undefined && Buffer.from(head.key).equals(line.entryOf(keys));
      if (head === undefined || headIsOurs) {
        if (head === undefined && hadPlace) line.forget(keys);
        if (headIsOurs) line.joined(keys, head.create_revision, request.waiting?.ttl ?? 0);
        return 'stale-line';
      }
      return { acquired: false, result: { acquired: false, remainingTtl: undefined } };
    }
    return { acquired: false, result: { acquired: false, remainingTtl: await remainingLease(client, current.lease) } };
  }

  /** Our earlier grant stands: its lease is kept alive now, and answered as granted, with its fence. */
  private async regranted(
    request: AcquireRequest,
    keys: EtcdResourceKeys,
    current: EtcdKeyValue,
    fence: EtcdKeyValue | undefined,
  ): Promise<Granted | Refused> {
    const [ttl] = await this.deps.keepAlives.renew([current.lease]);
    if (ttl instanceof Error) throw ttl;
    if (ttl === 0) return { acquired: false, result: { acquired: false, remainingTtl: undefined } };
    if (this.deps.line.has(keys)) void this.deps.leaveLine(request.key).catch(() => undefined);
    const revision = fence?.mod_revision ?? current.mod_revision;
    return { acquired: true, lease: current.lease, seconds: ttl, result: granted(request, revision) };
  }
}

/**
 * The revision at which a hand-over gave the key to `token` on `lease`: this reply's when it did, or the key's
 * when a copy sent before did (a member applied it and its reply was lost, so it was sent again); `undefined`
 * when the key was not handed over.
 */
function handedOverAt(reply: EtcdTxnResponse, lease: string, token: string): string | undefined {
  if (reply.succeeded) return reply.header.revision;
  const [current] = reply.responses[1]?.response_range?.kvs ?? [];
  const ours = current?.lease === lease && Buffer.from(current.value).toString('utf8') === token;
  return ours ? current.mod_revision : undefined;
}

function granted(request: AcquireRequest, revision: string): AcquireResult {
  return request.fencing ? { acquired: true, fence: Number(revision) } : { acquired: true };
}

/** The revision of our place from the join operation: the put's, or the place's own when it existed. */
function joinedRevision(response: EtcdResponseOp | undefined): string | undefined {
  const join = response?.response_txn;
  if (!join) return undefined;
  if (join.succeeded) return join.responses[0]?.response_put?.header.revision;
  return join.responses[0]?.response_range?.kvs[0]?.create_revision;
}
