import { performance } from 'node:perf_hooks';
import type { EtcdDuplexStream, EtcdKeepAlive } from './etcd-client.js';
import type { EtcdMembers } from './etcd-members.js';
import { openOnCurrentMember, type MemberStream } from './member-stream.js';
import { setTimeoutAfterReads } from '../../utils/timeout-after-reads.js';

type Stream = MemberStream<EtcdDuplexStream<{ ID: string }, EtcdKeepAlive>>;

interface Pending {
  readonly settle: (outcome: number | Error) => void;
}

/**
 * Streams a batch of renewals is spread over. A member answers the keep-alives of one stream one after
 * another, and a follower forwards each to the leader and waits: 200 renewals on one stream of a busy
 * cluster took longer than a renewal may wait, while the same member answered each stream in parallel. On
 * four streams, a loaded CI machine still lost all 200 leases with their renewals unanswered (50 forwards
 * in a row per stream); sixteen leave 13. A stream is an HTTP/2 stream on the member's one connection.
 */
export const KEEP_ALIVE_LANES = 16;

/**
 * The store's keep-alive streams ("lanes", on one member), shared by every lease it renews: a batch of
 * renewals is written at once, spread over the lanes, and its answers matched by lease id. When the member
 * answers nothing for `timeout` while renewals wait, they fail and the lanes are reset (a stream can stay
 * open while its member no longer answers: nothing is believed from it after that) and the store moves to
 * the next member; the next batch opens new lanes there. A member that answers slowly is not quiet: its
 * renewals keep waiting (the renewal scheduler still reports a lease lost when its validity runs out), as
 * failing them would only send the same renewals again, to a member no less busy.
 */
export class EtcdKeepAlives {
  private lanes?: Promise<Stream[]>;
  private readonly pending = new Map<string, Pending[]>();
  /** When the open lanes last answered a renewal (`performance.now()`). */
  private answeredAt = -Infinity;
  private closed = false;

  constructor(
    private readonly members: () => Promise<EtcdMembers>,
    private readonly timeout: number,
  ) {}

  /**
   * Renews each lease once: resolves, per lease, its TTL in seconds from now (`0`: the lease no longer
   * exists), or the error met when the member answered nothing for `timeout` ms (default: the store's).
   */
  async renew(ids: readonly string[], timeout = this.timeout): Promise<Array<number | Error>> {
    if (ids.length === 0) return [];
    let lanes: Stream[];
    try {
      if (this.closed) throw new Error('the store is closed');
      lanes = await this.open();
    } catch (error) {
      return ids.map(() => asError(error));
    }
    const sentAt = performance.now();
    const answers = ids.map(
      (id) =>
        new Promise<number | Error>((resolve) => {
          let cancelWatch: () => void;
          let settled = false;
          const watch = (wait: number): void => {
            cancelWatch = setTimeoutAfterReads(judge, wait);
          };
          const judge = (): void => {
            if (settled) return;
            const quietFor = performance.now() - Math.max(sentAt, this.answeredAt);
            if (quietFor < timeout) return watch(timeout - quietFor);
            settle(new Error(`no keep-alive answer within ${timeout} ms`));
            // nothing more is believed from lanes that went quiet
            this.reset(lanes, new Error('the keep-alive stream went quiet'));
          };
          watch(timeout);
          const entry: Pending = {
            settle: (outcome) => {
              settled = true;
              cancelWatch();
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
    ids.forEach((id, index) => lanes[index % lanes.length].write({ ID: id }));
    return Promise.all(answers);
  }

  /** Ends the lanes and fails what still waits on them. */
  close(): void {
    this.closed = true;
    const lanes = this.lanes;
    this.lanes = undefined;
    void lanes?.then(
      (open) => this.failAll(open, new Error('the store is closed')),
      () => undefined,
    );
  }

  private open(): Promise<Stream[]> {
    if (this.lanes) return this.lanes;
    const opening = this.members().then(async (members) => {
      // every lane on the same member: opened in one turn, before any await, so they cannot straddle a move
      const opened = Array.from({ length: KEEP_ALIVE_LANES }, () =>
        openOnCurrentMember(members, async (member) => (await member.leaseClient.leaseKeepAlive()) as Stream),
      );
      const settled = await Promise.allSettled(opened);
      const lanes = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
      const failure = settled.find((outcome) => outcome.status === 'rejected');
      if (failure) {
        cancelAll(lanes);
        throw failure.reason;
      }
      return lanes;
    });
    this.lanes = opening;
    opening.then(
      (lanes) => {
        for (const lane of lanes) {
          lane.on('data', (answer) => {
            this.answeredAt = performance.now();
            this.pending.get(String(answer.ID))?.[0]?.settle(Number(answer.TTL));
          });
          lane.on('error', (error) => this.reset(lanes, error));
          lane.on('end', () => this.reset(lanes, new Error('the keep-alive stream ended')));
        }
      },
      () => {
        if (this.lanes === opening) this.lanes = undefined;
      },
    );
    return opening;
  }

  private reset(lanes: Stream[], error: Error): void {
    void this.lanes?.then(
      (current) => {
        if (current !== lanes) return;
        this.lanes = undefined;
        this.failAll(lanes, error);
        const { member } = lanes[0];
        if (!this.closed && member) void this.members().then((members) => members.failed(member));
      },
      () => undefined,
    );
  }

  private failAll(lanes: Stream[], error: Error): void {
    for (const queue of [...this.pending.values()]) for (const entry of [...queue]) entry.settle(error);
    cancelAll(lanes);
  }
}

function cancelAll(lanes: readonly Stream[]): void {
  for (const lane of lanes) {
    try {
      lane.cancel();
    } catch {
      // a stream that already failed has nothing left to cancel
    }
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
