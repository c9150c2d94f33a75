import { raceDeadline } from '../../utils/deadline.js';
import type { Etcd3Client, EtcdTxnRequest, EtcdTxnResponse } from './etcd-client.js';

/** Errors that are etcd's answer, the same from any member: moving to another would not help. */
const ANSWERS =
  /lease not found|permission denied|authentication failed|invalid auth token|user name|role name|too many operations|duplicate key|key not found/;

/**
 * The members the store talks to, one client each, and which one it uses now: every call and both streams
 * go to the current member until it fails (unreachable, no answer within the deadline, no leader, a
 * partitioned minority), then the next one takes over. A stream that goes quiet moves on the same way, so a
 * member that keeps its connections open but answers nobody costs one deadline, not every lease.
 */
export class EtcdMembers {
  private index = 0;
  private readonly listeners = new Set<() => void>();

  /**
   * The unary calls of a client, each made through {@link EtcdMembers.call}: on the current member, then on
   * the next ones when it fails. (Its streams are the current member's; the store's streams use `current()`.)
   */
  readonly routed: Etcd3Client;

  /**
   * @param clients one client per member, in the order given; one client of the user's for all of them
   * @param names how errors name the members (`host:port`)
   */
  constructor(
    private readonly clients: readonly Etcd3Client[],
    private readonly names: readonly string[],
  ) {
    const call = this.call.bind(this);
    this.routed = {
      kv: { txn: (request) => call((client) => client.kv.txn(request)) },
      leaseClient: {
        leaseGrant: (request) => call((client) => client.leaseClient.leaseGrant(request)),
        leaseRevoke: (request) => call((client) => client.leaseClient.leaseRevoke(request)),
        leaseTimeToLive: (request) => call((client) => client.leaseClient.leaseTimeToLive(request)),
        leaseKeepAlive: () => this.current().leaseClient.leaseKeepAlive(),
      },
      watchClient: { watch: () => this.current().watchClient.watch() },
      maintenance: { status: () => call((client) => client.maintenance.status()) },
      close: () => this.close(),
    };
  }

  /** The client of the member in use. */
  current(): Etcd3Client {
    return this.clients[this.index];
  }

  /** `client` failed: unless another failure moved on already, the next member takes over. */
  failed(client: Etcd3Client): void {
    if (this.clients[this.index] !== client || this.clients.length === 1) return;
    this.index = (this.index + 1) % this.clients.length;
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` whenever another member takes over (a stream on the old one should follow). */
  onMove(listener: () => void): void {
    this.listeners.add(listener);
  }

  /**
   * Runs `call` on the current member and, when it fails for a reason another member might not have, on the
   * next ones, each at most once.
   */
  async call<T>(call: (client: Etcd3Client) => Promise<T>): Promise<T> {
    let lastError: unknown;
    for (let tried = 0; tried < this.clients.length; tried++) {
      const client = this.current();
      try {
        return await call(client);
      } catch (error) {
        if (error instanceof Error && ANSWERS.test(error.message)) throw error;
        lastError = error;
        this.failed(client);
      }
    }
    const reason = lastError instanceof Error ? lastError.message : String(lastError);
    throw new Error(`no etcd member answered (${this.names.join(', ')}); the last said: ${reason}`, {
      cause: lastError,
    });
  }

  /**
   * A read-only transaction whose every attempt has `timeout` ms instead of the usual deadline (renewals have
   * less time). Read-only: an attempt given up at the deadline may still run on its member.
   */
  txnWithin(request: EtcdTxnRequest, timeout: number): Promise<EtcdTxnResponse> {
    // judged by a deadline that reads the socket first (a gRPC deadline fires before an answer that came
    // during a stall of this process is read); gRPC's own, twice as long, only ends the call
    return this.call((client) =>
      raceDeadline(client.kv.txn(request, { deadline: Date.now() + 2 * timeout }), timeout, () => {
        throw new Error(`DEADLINE_EXCEEDED: no answer within ${timeout} ms`);
      }),
    );
  }

  /** Closes every client. */
  close(): void {
    this.listeners.clear();
    for (const client of this.clients) client.close();
  }
}
