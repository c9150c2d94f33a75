import type { ResponseRecords } from '../../interfaces/response-records.interface.js';
import type { Etcd3Client } from './etcd-client.js';
import { etcdRecordKey } from './etcd-keys.js';
import { leaseSeconds, MIN_ETCD_TTL } from './etcd-options.js';
import { revokeLease } from './etcd-spare-lease.js';

/** What the etcd records need of their lock store: its key prefix and its calls. */
export interface EtcdRecordsContext {
  readonly prefix: () => string;
  /** Runs `command` on the members' client; failures become the store's errors. */
  run<T>(operation: string, key: string | undefined, command: (client: Etcd3Client) => Promise<T>): Promise<T>;
}

/**
 * Response records in etcd, one key each (`<prefix>record:<key>`) attached to an etcd lease of its own, whose
 * TTL (the record's ttl rounded up to whole seconds) makes etcd delete it: no sweep of ours. A keep grants the
 * lease, then writes the key in a transaction only while it does not exist (`create_revision == 0`), agreed by
 * a quorum; a keep refused revokes its lease. A deletion revokes the lease the record had.
 */
export class EtcdRecords implements ResponseRecords {
  constructor(private readonly context: EtcdRecordsContext) {}

  async put(key: string, value: string, ttl: number): Promise<boolean> {
    const name = this.nameOf(key);
    return this.context.run('keep a response under', key, async (client) => {
      const { ID } = await client.leaseClient.leaseGrant({ TTL: leaseSeconds(Math.max(ttl, MIN_ETCD_TTL)) });
      // a failed keep may have been applied, now or later: its lease, which may hold the record, is left to run out
      const reply = await client.kv.txn({
        compare: [{ key: name, target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key: name, value: Buffer.from(value, 'utf8'), lease: ID } }],
        failure: [{ request_range: { key: name, keys_only: true } }],
      });
      // refused by our own keep, sent before and applied though its answer was lost (then sent again)
      const kept = reply.succeeded || reply.responses[0]?.response_range?.kvs[0]?.lease === ID;
      // a lease that holds nothing would live its whole ttl (a day, by default) for nothing
      if (!kept) revokeLease(client, ID);
      return kept;
    });
  }

  async get(key: string): Promise<string | undefined> {
    const name = this.nameOf(key);
    return this.context.run('read the response under', key, async (client) => {
      const reply = await client.kv.txn({ compare: [], success: [{ request_range: { key: name } }], failure: [] });
      return reply.responses[0]?.response_range?.kvs[0]?.value.toString('utf8');
    });
  }

  async delete(key: string): Promise<void> {
    const name = this.nameOf(key);
    await this.context.run('delete the response under', key, async (client) => {
      const reply = await client.kv.txn({
        compare: [],
        success: [{ request_delete_range: { key: name, prev_kv: true } }],
        failure: [],
      });
      const lease = reply.responses[0]?.response_delete_range?.prev_kvs?.[0]?.lease;
      if (lease && lease !== '0') revokeLease(client, lease);
    });
  }

  private nameOf(key: string): Buffer {
    return etcdRecordKey(this.context.prefix(), key);
  }
}
