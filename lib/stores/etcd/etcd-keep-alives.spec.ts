import { EventEmitter } from 'node:events';
import type { Etcd3Client } from './etcd-client.js';
import { EtcdKeepAlives, KEEP_ALIVE_LANES } from './etcd-keep-alives.js';
import type { EtcdMembers } from './etcd-members.js';

/** A keep-alive stream of a member that answers what it is sent after `delay` ms, one after another. */
class MemberLane extends EventEmitter {
  readonly written: string[] = [];
  cancelled = false;
  private queue = Promise.resolve();

  constructor(private readonly delay: number | 'never') {
    super();
  }

  write({ ID }: { ID: string }): void {
    this.written.push(ID);
    if (this.delay === 'never') return;
    const delay = this.delay;
    this.queue = this.queue.then(async () => {
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (!this.cancelled) this.emit('data', { ID, TTL: '6' });
    });
  }

  end(): void {}

  cancel(): void {
    this.cancelled = true;
  }
}

/** Members whose current one opens lanes answering after `delay`; records the lanes and the members failed. */
function membersAnsweringAfter(delay: number | 'never') {
  const lanes: MemberLane[] = [];
  const failed: Etcd3Client[] = [];
  const client = {
    leaseClient: {
      leaseKeepAlive: async () => {
        const lane = new MemberLane(delay);
        lanes.push(lane);
        return lane;
      },
    },
  } as unknown as Etcd3Client;
  const members = { current: () => client, failed: (member: Etcd3Client) => failed.push(member) };
  return { lanes, failed, members: async () => members as unknown as EtcdMembers };
}

describe('EtcdKeepAlives', () => {
  it('spreads a batch of renewals over its lanes, as a member answers each stream one renewal at a time', async () => {
    const member = membersAnsweringAfter(1);
    const keepAlives = new EtcdKeepAlives(member.members, 1000);
    const ids = Array.from({ length: 2 * KEEP_ALIVE_LANES }, (_, index) => String(index));
    expect(await keepAlives.renew(ids)).toEqual(ids.map(() => 6));
    expect(KEEP_ALIVE_LANES).toBeGreaterThan(1);
    expect(member.lanes).toHaveLength(KEEP_ALIVE_LANES);
    expect(member.lanes.map((lane) => lane.written.length)).toEqual(member.lanes.map(() => 2));
    keepAlives.close();
  });

  it('keeps waiting on a member that answers slowly but steadily, and does not leave it', async () => {
    // each lane answers one renewal every 120 ms: the last of 3 per lane comes 360 ms after the batch was sent,
    // past the 200 ms a renewal may wait for a member that answers nothing
    const member = membersAnsweringAfter(120);
    const keepAlives = new EtcdKeepAlives(member.members, 200);
    const ids = Array.from({ length: 3 * KEEP_ALIVE_LANES }, (_, index) => String(index));
    expect(await keepAlives.renew(ids)).toEqual(ids.map(() => 6));
    expect(member.failed).toEqual([]);
    expect(member.lanes.some((lane) => lane.cancelled)).toBe(false);
    keepAlives.close();
  });

  it('fails every waiting renewal and leaves a member that answers nothing, then opens new lanes', async () => {
    const member = membersAnsweringAfter('never');
    const keepAlives = new EtcdKeepAlives(member.members, 100);
    const messages = (await keepAlives.renew(['1', '2', '3'])).map((outcome) => (outcome as Error).message);
    // whichever renewal's deadline is seen first fails by it; it resets the lanes, which fails the others
    expect(messages).toContain('no keep-alive answer within 100 ms');
    expect(messages).toEqual(
      messages.map(() => expect.stringMatching(/^(no keep-alive answer|the keep-alive stream)/)),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(member.failed).toHaveLength(1);
    expect(member.lanes.every((lane) => lane.cancelled)).toBe(true);
    await keepAlives.renew(['4']);
    expect(member.lanes).toHaveLength(2 * KEEP_ALIVE_LANES);
    keepAlives.close();
  });
});
