import { etcdRecordKey, etcdResourceKeys, lineEntry } from './etcd-keys.js';

const KEYS = ['a', 'a/', 'a/lock', 'ab', '1:a', 'a\u0000b', 'ключ:🔒', '', '/', 'line/x', 'k'.repeat(300)];

/** Whether `key` falls in the range [start, end). */
const within = (key: Buffer, start: Buffer, end: Buffer): boolean =>
  Buffer.compare(key, start) >= 0 && Buffer.compare(key, end) < 0;

describe('etcdResourceKeys', () => {
  it("puts every key of a resource inside its own room, and none inside another resource's room", () => {
    for (const key of KEYS) {
      const mine = etcdResourceKeys('lock:', key);
      const parts = [mine.lock, mine.holder, mine.fence, lineEntry(mine, '0123456789abcdef')];
      for (const part of parts) expect(within(part, mine.room, mine.roomEnd)).toBe(true);
      for (const other of KEYS.filter((candidate) => candidate !== key)) {
        const theirs = etcdResourceKeys('lock:', other);
        for (const part of parts) expect(within(part, theirs.room, theirs.roomEnd)).toBe(false);
      }
    }
  });

  it('keeps the line range to line entries: the lock, holder and fence keys are outside it', () => {
    const keys = etcdResourceKeys('lock:', 'a');
    expect(within(lineEntry(keys, 'ffffffffffffffff'), keys.line, keys.lineEnd)).toBe(true);
    for (const part of [keys.lock, keys.holder, keys.fence]) expect(within(part, keys.line, keys.lineEnd)).toBe(false);
  });

  it("puts no response record inside a resource's room", () => {
    for (const key of [...KEYS, 'record:a', 'record']) {
      const room = etcdResourceKeys('lock:', key);
      for (const record of KEYS) expect(within(etcdRecordKey('lock:', record), room.room, room.roomEnd)).toBe(false);
    }
  });

  it('keeps two prefixes apart', () => {
    const a = etcdResourceKeys('a:', 'x');
    const b = etcdResourceKeys('b:', 'x');
    expect(within(b.lock, a.room, a.roomEnd)).toBe(false);
  });
});
