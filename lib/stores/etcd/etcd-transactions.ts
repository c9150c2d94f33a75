import type { AcquireRequest } from '../../interfaces/lease.interface.js';
import type { EtcdCompare, EtcdRequestOp, EtcdTxnRequest } from './etcd-client.js';
import type { EtcdResourceKeys } from './etcd-keys.js';

/**
 * The transactions of the etcd store, one function each: what is compared and written, in one place. Each
 * runs atomically at one revision; nested transactions stand in for the "or" that comparisons lack.
 */

/** What a grant needs beyond the request: the lease, and this process's standing in the resource's line. */
export interface GrantPlan {
  readonly lease: string;
  /** The comparison that nobody waits ahead of us (see EtcdLine.gate). */
  readonly gate: EtcdCompare;
  /** Deletes our place in the line once granted. */
  readonly leave: EtcdRequestOp;
  /** Takes a place in the line when refused (a waiter's attempt), or nothing. */
  readonly join?: EtcdRequestOp;
}

/** The comparison that the key is held by `token`. */
export function ownedBy(keys: EtcdResourceKeys, token: string): EtcdCompare {
  return { key: keys.lock, target: 'Value', result: 'Equal', value: Buffer.from(token, 'utf8') };
}

/** The writes of a grant: the lease's key, its holder record (or none), and the fence. */
function grantOps(keys: EtcdResourceKeys, request: AcquireRequest, lease: string): EtcdRequestOp[] {
  return [
    { request_put: { key: keys.lock, value: Buffer.from(request.token, 'utf8'), lease } },
    // a grant without a record drops one left by a lease deleted from outside
    request.holder
      ? { request_put: { key: keys.holder, value: Buffer.from(request.holder, 'utf8'), lease } }
      : { request_delete_range: { key: keys.holder } },
    ...(request.fencing ? [{ request_put: { key: keys.fence, value: Buffer.alloc(0) } }] : []),
  ];
}

/**
 * Grants the key while it does not exist and nobody waits ahead of us. Refused, it answers (in this order)
 * the key, the fence key, the head of the line, and our place when the plan joins the line.
 */
export function grantTxn(keys: EtcdResourceKeys, request: AcquireRequest, plan: GrantPlan): EtcdTxnRequest {
  return {
    compare: [{ key: keys.lock, target: 'Create', result: 'Equal', create_revision: 0 }, plan.gate],
    success: [...grantOps(keys, request, plan.lease), plan.leave],
    failure: [
      { request_range: { key: keys.lock } },
      { request_range: { key: keys.fence } },
      {
        request_range: {
          key: keys.line,
          range_end: keys.lineEnd,
          sort_target: 'Create',
          sort_order: 'Ascend',
          limit: 1,
        },
      },
      ...(plan.join ? [plan.join] : []),
    ],
  };
}

/** Deletes the key and its holder record while `token` holds it; answers the deleted key (for its lease). */
export function releaseTxn(keys: EtcdResourceKeys, token: string): EtcdTxnRequest {
  return {
    compare: [ownedBy(keys, token)],
    success: [
      { request_delete_range: { key: keys.lock, prev_kv: true } },
      { request_delete_range: { key: keys.holder } },
    ],
    failure: [],
  };
}

/**
 * While `token` holds the key: grants it to `next` in the same step when nobody waits ahead of us, else
 * releases it (the nested transaction of the failure branch says whether it did) and answers the key, by
 * which a copy resent after its reply was lost finds that the first copy handed it over.
 */
export function handOverTxn(
  keys: EtcdResourceKeys,
  token: string,
  next: AcquireRequest,
  plan: GrantPlan,
): EtcdTxnRequest {
  return {
    compare: [ownedBy(keys, token), plan.gate],
    success: [...grantOps(keys, next, plan.lease), plan.leave],
    failure: [{ request_txn: releaseTxn(keys, token) }, { request_range: { key: keys.lock } }],
  };
}

/** Moves the key (and its holder record, when there is one) to `lease`, while `token` holds it. */
export function moveTxn(keys: EtcdResourceKeys, token: string, lease: string): EtcdTxnRequest {
  return {
    compare: [ownedBy(keys, token)],
    success: [
      { request_put: { key: keys.lock, ignore_value: true, lease } },
      {
        request_txn: {
          compare: [{ key: keys.holder, target: 'Create', result: 'Greater', create_revision: 0 }],
          success: [{ request_put: { key: keys.holder, ignore_value: true, lease } }],
          failure: [],
        },
      },
    ],
    failure: [],
  };
}

/** Reads a resource: its key, holder record and fence key, at one revision. */
export function inspectTxn(keys: EtcdResourceKeys): EtcdTxnRequest {
  return {
    compare: [],
    success: [
      { request_range: { key: keys.lock } },
      { request_range: { key: keys.holder } },
      { request_range: { key: keys.fence } },
    ],
    failure: [],
  };
}

/** Reads the keys of many resources at one revision (at most etcd's `--max-txn-ops`, 128 by default). */
export function readLocksTxn(keys: readonly EtcdResourceKeys[]): EtcdTxnRequest {
  return { compare: [], success: keys.map((resource) => ({ request_range: { key: resource.lock } })), failure: [] };
}

/**
 * Checks the right to read and write `probe` without writing: its comparison never holds, and etcd checks
 * the permissions of both branches.
 */
export function permissionProbeTxn(probe: Buffer): EtcdTxnRequest {
  return {
    compare: [{ key: probe, target: 'Create', result: 'Less', create_revision: 0 }],
    success: [{ request_put: { key: probe, value: Buffer.alloc(0) } }],
    failure: [{ request_range: { key: probe } }],
  };
}
