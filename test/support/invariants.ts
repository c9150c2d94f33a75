import type { Redis } from 'ioredis';

/**
 * Invariant checkers shared by every process of a fault scenario. Their state lives in a Redis that the
 * scenario never faults (the "protected resource"), so that what they count is what the lock let happen,
 * not what the fault did to the checker.
 */

/**
 * A shared number incremented by a deliberately non-atomic read-modify-write (GET, yield, SET), so that two
 * holders inside at once lose an update. Each write also counts itself, atomically with the SET: at the end
 * the value must equal the number of writes.
 */
export class LostUpdateCounter {
  private readonly valueKey: string;
  private readonly writesKey: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.valueKey = `${prefix}counter`;
    this.writesKey = `${prefix}counter:writes`;
  }

  async read(): Promise<number> {
    return Number((await this.redis.get(this.valueKey)) ?? 0);
  }

  /** Writes `value` read earlier, and counts one successful critical section. */
  async write(value: number): Promise<void> {
    const replies = await this.redis.multi().set(this.valueKey, String(value)).incr(this.writesKey).exec();
    const failed = replies?.find(([error]) => error);
    if (!replies || failed) throw new Error(`counter write failed: ${String(failed?.[0] ?? 'transaction aborted')}`);
  }

  async totals(): Promise<{ value: number; writes: number }> {
    const [value, writes] = await this.redis.mget(this.valueKey, this.writesKey);
    return { value: Number(value ?? 0), writes: Number(writes ?? 0) };
  }
}

/** What one critical section did, as its process reported it on the way out. */
export interface SectionExit {
  readonly exitedAt: number;
  /** Whether the unfenced counter was written (the lease still looked valid) or skipped. */
  readonly unfenced: 'written' | 'skipped';
  /** How the fenced resource answered: the read was refused, the write was refused, or it was accepted. */
  readonly fenced: 'accepted' | 'refused-read' | 'refused-write';
  /** `lock.isHeld` when the section ended. */
  readonly heldAtExit: boolean;
}

/** One critical section as the checker saw it. */
export interface SectionRecord extends Partial<SectionExit> {
  readonly sid: string;
  readonly fence: number;
  readonly enteredAt: number;
  /** Why and when the holder's signal aborted, or `killed` for a section whose process was killed. */
  readonly lost?: { readonly reason: string; readonly at: number };
}

/** Two sections that were inside at once; `stale` is the one with the lower fence. */
export interface Overlap {
  readonly older: string;
  readonly newer: string;
  readonly stale: string;
  /** The stale holder was told (its signal aborted) or killed. */
  readonly detected: boolean;
}

/** Everything the checkers counted in one scenario. */
export interface InvariantReport {
  readonly sections: SectionRecord[];
  readonly counter: { readonly value: number; readonly writes: number; readonly lostUpdates: number };
  readonly fenced: {
    readonly value: number;
    readonly accepted: number;
    readonly lostUpdates: number;
    /** Reads and writes refused because a higher fence had been seen. */
    readonly staleRefused: number;
    /** Grants that carried a fence another grant already had. */
    readonly duplicateFences: number;
  };
  readonly overlaps: Overlap[];
}

const ENTER = `
local others = redis.call('SMEMBERS', KEYS[1])
redis.call('SADD', KEYS[1], ARGV[1])
for _, other in ipairs(others) do redis.call('RPUSH', KEYS[2], other .. ' ' .. ARGV[1]) end
if redis.call('HSETNX', KEYS[3], ARGV[2], ARGV[1]) == 0 then redis.call('INCR', KEYS[4]) end
redis.call('HSET', KEYS[5], ARGV[1], ARGV[3] .. ' ' .. ARGV[2])
return #others
`;

// fences are compared as numbers; they stay below 2^53, where Lua's doubles are exact
const READ = `
local last = redis.call('GET', KEYS[1])
if last and tonumber(ARGV[1]) < tonumber(last) then
  redis.call('INCR', KEYS[3])
  return -1
end
redis.call('SET', KEYS[1], ARGV[1])
return tonumber(redis.call('GET', KEYS[2]) or '0')
`;

const WRITE = `
local last = redis.call('GET', KEYS[1])
if last and tonumber(ARGV[1]) < tonumber(last) then
  redis.call('INCR', KEYS[4])
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('INCR', KEYS[3])
return 1
`;

/**
 * A resource that checks fences: every read and write carries the holder's fence, and anything below the
 * highest fence seen so far is refused (atomically, in one Lua script). The section's work is a fenced
 * read-modify-write of a number, so a stale holder that got through would show as a lost update. It also
 * tracks who is inside, to count overlapping holders and whether the stale one of each pair was told.
 */
export class FencedResource {
  private readonly keys;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    const key = (name: string) => `${prefix}fenced:${name}`;
    this.keys = {
      last: key('last'),
      value: key('value'),
      accepted: key('accepted'),
      refused: key('refused'),
      inside: key('inside'),
      overlaps: key('overlaps'),
      fences: key('fences'),
      duplicates: key('duplicates'),
      entered: key('entered'),
      exits: key('exits'),
      lost: key('lost'),
    };
  }

  /** A section starts: returns how many other sections are inside right now. */
  async enter(sid: string, fence: number, at = Date.now()): Promise<number> {
    const { inside, overlaps, fences, duplicates, entered } = this.keys;
    return Number(
      await this.redis.eval(ENTER, 5, inside, overlaps, fences, duplicates, entered, sid, String(fence), String(at)),
    );
  }

  /** Reads the value with `fence`; `undefined` when a higher fence was seen (the read is refused). */
  async read(fence: number): Promise<number | undefined> {
    const { last, value, refused } = this.keys;
    const reply = Number(await this.redis.eval(READ, 3, last, value, refused, String(fence)));
    return reply < 0 ? undefined : reply;
  }

  /** Writes `value` with `fence`; `false` when a higher fence was seen (the write is refused). */
  async write(fence: number, value: number): Promise<boolean> {
    const { last, value: valueKey, accepted, refused } = this.keys;
    return (await this.redis.eval(WRITE, 4, last, valueKey, accepted, refused, String(fence), String(value))) === 1;
  }

  /** A section ends. */
  async exit(sid: string, exit: SectionExit): Promise<void> {
    await this.redis.multi().srem(this.keys.inside, sid).hset(this.keys.exits, sid, JSON.stringify(exit)).exec();
  }

  /** The holder of `sid` was told its lease is lost. */
  async lost(sid: string, reason: string, at = Date.now()): Promise<void> {
    await this.redis.hset(this.keys.lost, sid, `${reason} ${at}`);
  }

  /** The sections inside right now. */
  async inside(): Promise<string[]> {
    return this.redis.smembers(this.keys.inside);
  }

  /** Takes the sections of a killed process out: they will never exit by themselves. */
  async forgetKilled(processId: string, at = Date.now()): Promise<string[]> {
    const killed = (await this.inside()).filter((sid) => sid.startsWith(`${processId}:`));
    for (const sid of killed) {
      await this.redis.multi().srem(this.keys.inside, sid).hset(this.keys.lost, sid, `killed ${at}`).exec();
    }
    return killed;
  }

  /** Everything counted so far, with the overlaps judged. */
  async report(counter: LostUpdateCounter): Promise<InvariantReport> {
    const k = this.keys;
    const [entered, exits, lost, overlaps, numbers, totals] = await Promise.all([
      this.redis.hgetall(k.entered),
      this.redis.hgetall(k.exits),
      this.redis.hgetall(k.lost),
      this.redis.lrange(k.overlaps, 0, -1),
      this.redis.mget(k.value, k.accepted, k.refused, k.duplicates),
      counter.totals(),
    ]);
    const sections = new Map<string, SectionRecord>();
    for (const [sid, text] of Object.entries(entered)) {
      const [at, fence] = text.split(' ').map(Number);
      const exit = exits[sid] ? (JSON.parse(exits[sid]) as SectionExit) : {};
      const [reason, lostAt] = lost[sid]?.split(' ') ?? [];
      sections.set(sid, {
        sid,
        fence,
        enteredAt: at,
        ...exit,
        ...(reason ? { lost: { reason, at: Number(lostAt) } } : {}),
      });
    }
    const [value, accepted, refused, duplicates] = numbers.map((n) => Number(n ?? 0));
    return {
      sections: [...sections.values()].sort((a, b) => a.enteredAt - b.enteredAt),
      counter: { ...totals, lostUpdates: totals.writes - totals.value },
      fenced: {
        value,
        accepted,
        lostUpdates: accepted - value,
        staleRefused: refused,
        duplicateFences: duplicates,
      },
      overlaps: overlaps.map((pair) => {
        const [older, newer] = pair.split(' ');
        const stale = (sections.get(older)?.fence ?? 0) <= (sections.get(newer)?.fence ?? 0) ? older : newer;
        return { older, newer, stale, detected: sections.get(stale)?.lost !== undefined };
      }),
    };
  }
}
