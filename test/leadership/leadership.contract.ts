import { performance } from 'node:perf_hooks';
import { LockManager } from '../../lib/core/lock-manager.js';
import type { LockLostError } from '../../lib/errors/lock-lost.error.js';
import { leaderKey } from '../../lib/leadership/leader-key.js';
import type { Leadership } from '../../lib/leadership/leadership.js';
import type { LeadershipHandle } from '../../lib/leadership/leadership-handle.js';
import type { StoreKind, StorePair } from '../support/stores.js';

/** A term as the function saw it: when it started and how it ended. */
interface SeenTerm {
  readonly manager: number;
  readonly term: number;
  readonly signal: AbortSignal;
}

/**
 * What leadership must do on every store, through the store contract alone: two managers on one lock space
 * (two "processes") campaign for one name.
 */
export function describeLeadership(kind: StoreKind): void {
  describe(`leadership on ${kind.name}`, () => {
    // long enough that a loaded machine never loses a lease by stalling, and a hand-over shows against it
    const ttl = Math.max(3000, kind.minTtl ?? 0);
    let pair: StorePair;
    let managers: LockManager[];
    let handles: LeadershipHandle[];
    let terms: SeenTerm[];
    let nextTerm: Array<() => void>;

    beforeEach(async () => {
      pair = await kind.create();
      managers = [pair.store, pair.other].map((store) => new LockManager({ store, closeStore: false }));
      handles = [];
      terms = [];
      nextTerm = [];
    });

    afterEach(async () => {
      await Promise.all(handles.map((handle) => handle.stop()));
      await Promise.all(managers.map((manager) => manager.close()));
      await pair.close();
    });

    /** Campaigns with manager `index`; each term runs until its signal aborts. */
    function campaign(index: number, name: string): LeadershipHandle {
      const handle = managers[index].lead(
        name,
        async (leadership: Leadership) => {
          terms.push({ manager: index, term: leadership.term, signal: leadership.signal });
          for (const notify of nextTerm.splice(0)) notify();
          await new Promise((resolve) => leadership.signal.addEventListener('abort', resolve, { once: true }));
        },
        { ttl, backoff: 0 },
      );
      handles.push(handle);
      return handle;
    }

    /** Resolves when the `count`-th term has begun. */
    async function termCount(count: number, timeout = 10_000): Promise<SeenTerm> {
      const deadline = performance.now() + timeout;
      while (terms.length < count) {
        if (performance.now() > deadline) throw new Error(`fewer than ${count} terms within ${timeout} ms`);
        await new Promise<void>((resolve) => {
          nextTerm.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return terms[count - 1];
    }

    it('lets one of two instances lead while the other follows, and hands over at once on stop()', async () => {
      const name = `jobs-${Date.now()}`;
      const first = [campaign(0, name), campaign(1, name)];
      const elected = await termCount(1);
      // the follower keeps asking, and keeps being refused
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(terms).toHaveLength(1);
      expect(first[elected.manager].isLeader).toBe(true);
      expect(first[elected.manager].term).toBe(elected.term);
      expect(managers[elected.manager].isLeader(name)).toBe(true);
      expect(first[1 - elected.manager].isLeader).toBe(false);

      const stoppedAt = performance.now();
      await first[elected.manager].stop();
      const next = await termCount(2);
      const handOver = performance.now() - stoppedAt;

      expect((elected.signal.reason as LockLostError).reason).toBe('resigned');
      expect(next.manager).toBe(1 - elected.manager);
      expect(next.term).toBeGreaterThan(elected.term);
      // a notice wakes the follower: well under the ttl it would otherwise wait
      expect(handOver).toBeLessThan(ttl / 2);
      expect(managers[elected.manager].isLeader(name)).toBe(false);
      const info = await managers[elected.manager].inspectLeader(name);
      expect(info).toMatchObject({ led: true, term: next.term, leader: { pid: process.pid, label: leaderKey(name) } });
    });

    it('aborts the signal of a leader whose lease was taken from it, and elects again with a higher term', async () => {
      const name = `lost-${Date.now()}`;
      const lost: string[] = [];
      managers[0].on('leadership-lost', (event) => lost.push(`${event.name} ${event.reason}`));
      campaign(0, name);
      const first = await termCount(1);
      await pair.deleteLease(leaderKey(name));

      const second = await termCount(2, ttl + 5000);
      expect(first.signal.aborted).toBe(true);
      expect((first.signal.reason as LockLostError).reason).toBe('taken');
      expect(lost).toEqual([`${name} taken`]);
      expect(second.term).toBeGreaterThan(first.term);
    });
  });
}
