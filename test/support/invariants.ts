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

/** The kind of holder a section is: a semaphore permit, a reader, a writer, or the key's mutex. */
export type HolderKind = 'permit' | 'read' | 'write' | 'mutex';

/**
 * Whether holders of these kinds may be inside at once on one key whose semaphore has `limit` places: a
 * mutex or a writer only alone, readers together, at most `limit` permits.
 */
export function mayShare(kinds: readonly HolderKind[], limit: number): boolean {
  if (kinds.length > 1 && kinds.some((kind) => kind === 'mutex' || kind === 'write')) return false;
  return kinds.filter((kind) => kind === 'permit').length <= limit;
}

/** One section counted by the census. */
export interface CensusSection {
  readonly sid: string;
  readonly kind: HolderKind;
  readonly enteredAt: number;
  readonly exitedAt?: number;
  /** `lock.isHeld` when the section ended. */
  readonly heldAtExit?: boolean;
  /** Why and when the holder's signal aborted, or `killed` for a section whose process was killed. */
  readonly lost?: { readonly reason: string; readonly at: number };
}

/** The sections inside at once when one of them entered (that one first). */
export interface Crowd {
  readonly members: ReadonlyArray<{ readonly sid: string; readonly kind: HolderKind }>;
}

/** Everything the census counted in one scenario. */
export interface CensusReport {
  readonly sections: CensusSection[];
  /** Every crowd seen at an entry that `mayShare` refuses. */
  readonly crowds: Crowd[];
  /** The most holders of each kind seen inside at once. */
  readonly mostInside: Record<HolderKind, number>;
}

const CENSUS_ENTER = `
-- who was inside before this section, as sid=kind
local others = redis.call('HGETALL', KEYS[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3] .. ' ' .. ARGV[2])
local crowd = { ARGV[1] .. '=' .. ARGV[2] }
for i = 1, #others, 2 do crowd[#crowd + 1] = others[i] .. '=' .. others[i + 1] end
-- every crowd is kept, in the order of the entries: the report judges each against the key's shape
redis.call('RPUSH', KEYS[2], table.concat(crowd, ' '))
return #others
`;

/**
 * Who is inside a key shared by permits (a semaphore, readers and writers, mutex sections beside them): each
 * entry is counted atomically with the holders already inside, so that the report can judge every crowd
 * against the key's shape. Lives in the checkers' Redis, which the scenario never faults.
 */
export class HolderCensus {
  private readonly keys;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    /** The semaphore's places, for judging crowds of permits. */
    private readonly limit = 0,
  ) {
    const key = (name: string) => `${prefix}census:${name}`;
    this.keys = {
      inside: key('inside'),
      crowds: key('crowds'),
      entered: key('entered'),
      exits: key('exits'),
      lost: key('lost'),
    };
  }

  /** A section of `kind` starts: returns how many other sections are inside right now. */
  async enter(sid: string, kind: HolderKind, at = Date.now()): Promise<number> {
    const { inside, crowds, entered } = this.keys;
    return Number(await this.redis.eval(CENSUS_ENTER, 3, inside, crowds, entered, sid, kind, String(at)));
  }

  /** A section ends. */
  async exit(sid: string, heldAtExit: boolean, at = Date.now()): Promise<void> {
    const exit = JSON.stringify({ exitedAt: at, heldAtExit });
    await this.redis.multi().hdel(this.keys.inside, sid).hset(this.keys.exits, sid, exit).exec();
  }

  /** The holder of `sid` was told its lease is lost. */
  async lost(sid: string, reason: string, at = Date.now()): Promise<void> {
    await this.redis.hset(this.keys.lost, sid, `${reason} ${at}`);
  }

  /** The sections inside right now. */
  async inside(): Promise<string[]> {
    return this.redis.hkeys(this.keys.inside);
  }

  /** Takes the sections of a killed process out: they will never exit by themselves. */
  async forgetKilled(processId: string, at = Date.now()): Promise<string[]> {
    const killed = (await this.inside()).filter((sid) => sid.startsWith(`${processId}:`));
    for (const sid of killed) {
      await this.redis.multi().hdel(this.keys.inside, sid).hset(this.keys.lost, sid, `killed ${at}`).exec();
    }
    return killed;
  }

  /** Everything counted so far, with every crowd judged. */
  async report(): Promise<CensusReport> {
    const k = this.keys;
    const [entered, exits, lost, lines] = await Promise.all([
      this.redis.hgetall(k.entered),
      this.redis.hgetall(k.exits),
      this.redis.hgetall(k.lost),
      this.redis.lrange(k.crowds, 0, -1),
    ]);
    const sections = Object.entries(entered).map(([sid, text]): CensusSection => {
      const [at, kind] = text.split(' ');
      const exit = exits[sid] ? (JSON.parse(exits[sid]) as Pick<CensusSection, 'exitedAt' | 'heldAtExit'>) : {};
      const [reason, lostAt] = lost[sid]?.split(' ') ?? [];
      return {
        sid,
        kind: kind as HolderKind,
        enteredAt: Number(at),
        ...exit,
        ...(reason ? { lost: { reason, at: Number(lostAt) } } : {}),
      };
    });
    const mostInside: Record<HolderKind, number> = { permit: 0, read: 0, write: 0, mutex: 0 };
    const crowds: Crowd[] = [];
    for (const line of lines) {
      const members = line.split(' ').map((entry) => {
        const [sid, kind] = entry.split('=');
        return { sid, kind: kind as HolderKind };
      });
      const kinds = members.map((member) => member.kind);
      for (const kind of Object.keys(mostInside) as HolderKind[]) {
        mostInside[kind] = Math.max(mostInside[kind], kinds.filter((each) => each === kind).length);
      }
      if (!mayShare(kinds, this.limit)) crowds.push({ members });
    }
    return { sections: sections.sort((a, b) => a.enteredAt - b.enteredAt), crowds, mostInside };
  }
}
