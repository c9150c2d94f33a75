import type { EtcdDuplexStream, EtcdKeepAlive, Etcd3Client } from './etcd-client.js';
import type { EtcdMembers } from './etcd-members.js';
import { openOnCurrentMember } from './member-stream.js';

type Stream = EtcdDuplexStream<{ ID: string }, EtcdKeepAlive> & { member?: Etcd3Client };

interface Pending {
  readonly settle: (outcome: number | Error) => void;
}

/**
 * The store's one keep-alive stream, shared by every lease it renews: a batch of renewals is written at once
 * and its answers matched by lease id. An answer that does not come within `timeout` fails its renewal and
 * resets the stream (a stream can stay open while its member no longer answers: nothing is believed from
 * it after that) and moves the store to the next member; the next batch opens a new stream there.
 */
export class EtcdKeepAlives {
  private stream?: Promise<Stream>;
  private readonly pending = new Map<string, Pending[]>();
  private closed = false;

  constructor(
    private readonly members: () => Promise<EtcdMembers>,
    private readonly timeout: number,
  ) {}

  /**
   * Renews each lease once: resolves, per lease, its TTL in seconds from now (`0`: the lease no longer
   * exists), or the error that kept the answer from coming within `timeout` ms (default: the store's).
   */
  async renew(ids: readonly string[], timeout = this.timeout): Promise<Array<number | Error>> {
    if (ids.length === 0) return [];
    let stream: Stream;
    try {
      if (this.closed) throw new Error('the store is closed');
      stream = await this.open();
    } catch (error) {
      return ids.map(() => asError(error));
    }
    const answers = ids.map(
      (id) =>
        new Promise<number | Error>((resolve) => {
          const timer = setTimeout(() => {
            settle(new Error(`no keep-alive answer within ${timeout} ms`));
            // nothing more is believed from a stream that went quiet
            this.reset(stream, new Error('the keep-alive stream went quiet'));
          }, timeout);
          const entry: Pending = {
            settle: (outcome) => {
              clearTimeout(timer);
              const queue = this.pending.get(id);
              const index = queue?.indexOf(entry) ?? -1;
              if (queue && index >= 0) queue.splice(index, 1);
              if (queue?.length === 0) this.pending.delete(id);
              resolve(outcome);
            },
          };
          const settle = entry.settle;
          const queue = this.pending.get(id);
          if (queue) queue.push(entry);
          else this.pending.set(id, [entry]);
        }),
    );
    for (const id of ids) stream.write({ ID: id });
    return Promise.all(answers);
  }

  /** Ends the stream and fails what still waits on it. */
  close(): void {
    this.closed = true;
    const stream = this.stream;
    this.stream = undefined;
    void stream?.then(
      (open) => this.failAll(open, new Error('the store is closed')),
      () => undefined,
    );
  }

  private open(): Promise<Stream> {
    if (this.stream) return this.stream;
    const opening = this.members().then((members) =>
      openOnCurrentMember(members, async (member) => (await member.leaseClient.leaseKeepAlive()) as Stream),
    );
    this.stream = opening;
    opening.then(
      (stream) => {
        stream.on('data', (answer) => this.pending.get(String(answer.ID))?.[0]?.settle(Number(answer.TTL)));
        stream.on('error', (error) => this.reset(stream, error));
        stream.on('end', () => this.reset(stream, new Error('the keep-alive stream ended')));
      },
      () => {
        if (this.stream === opening) this.stream = undefined;
      },
    );
    return opening;
  }

  private reset(stream: Stream, error: Error): void {
    void this.stream?.then(
      (current) => {
        if (current !== stream) return;
        this.stream = undefined;
        this.failAll(stream, error);
        const { member } = stream;
        if (!this.closed && member) void this.members().then((members) => members.failed(member));
      },
      () => undefined,
    );
  }

  private failAll(stream: Stream, error: Error): void {
    for (const queue of [...this.pending.values()]) for (const entry of [...queue]) entry.settle(error);
    try {
      stream.cancel();
    } catch {
      // a stream that already failed has nothing left to cancel
    }
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
