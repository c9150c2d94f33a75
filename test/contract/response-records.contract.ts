import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ResponseRecords } from '../../lib/interfaces/response-records.interface.js';
import type { StoreKind, StorePair } from '../support/stores.js';

/** The records capability of a store, which every kind run here must have. */
function recordsOf(pair: StorePair, view: 'store' | 'other'): ResponseRecords {
  const records = pair[view].capabilities?.records;
  if (!records) throw new Error('this store keeps no response records');
  return records;
}

/** Polls `read` until it answers `undefined`, for at most `timeout` ms; resolves with how long it took. */
async function goneWithin(read: () => Promise<string | undefined>, timeout: number): Promise<number> {
  const start = Date.now();
  while ((await read()) !== undefined) {
    if (Date.now() - start > timeout) throw new Error(`the record was still there after ${timeout} ms`);
    await sleep(25);
  }
  return Date.now() - start;
}

/**
 * What every store that keeps response records (`capabilities.records`) must do, seen from the two views of one
 * lock space (two store instances on one server, or one memory store): the atomic keep `@Idempotent()` relies on,
 * the ttl, the deletion, values as they were given.
 */
export function describeResponseRecords(kind: StoreKind): void {
  describe(`${kind.name} response records`, () => {
    let pair: StorePair;
    let records: ResponseRecords;
    let other: ResponseRecords;

    beforeEach(async () => {
      pair = await kind.create();
      records = recordsOf(pair, 'store');
      other = recordsOf(pair, 'other');
    });

    afterEach(async () => {
      await pair?.close();
    });

    it('keeps a record once: a second keep under the key is refused and the first stays as it was', async () => {
      const key = randomUUID();
      expect(await records.get(key)).toBeUndefined();
      expect(await records.put(key, 'first', 60_000)).toBe(true);
      expect(await other.put(key, 'second', 60_000)).toBe(false);
      expect(await other.get(key)).toBe('first');
      expect(await records.get(key)).toBe('first');
    });

    it('keeps exactly one of many concurrent keeps of one key, from both views', async () => {
      const key = randomUUID();
      const values = Array.from({ length: 12 }, (_, i) => `value-${i}`);
      const kept = await Promise.all(values.map((value, i) => (i % 2 ? other : records).put(key, value, 60_000)));
      expect(kept.filter(Boolean)).toHaveLength(1);
      expect(await records.get(key)).toBe(values[kept.indexOf(true)]);
    });

    it('forgets a record once its ttl has passed, and then keeps a new one under the key', async () => {
      const key = randomUUID();
      expect(await records.put(key, 'short', 300)).toBe(true);
      expect(await other.get(key)).toBe('short');
      await goneWithin(() => other.get(key), 10_000);
      expect(await records.get(key)).toBeUndefined();
      expect(await other.put(key, 'next', 60_000)).toBe(true);
      expect(await records.get(key)).toBe('next');
    });

    it('deletes a record, live or not, after which a keep under the key succeeds', async () => {
      const key = randomUUID();
      await records.put(key, 'doomed', 60_000);
      await other.delete(key);
      expect(await records.get(key)).toBeUndefined();
      await records.delete(key);
      expect(await other.put(key, 'again', 60_000)).toBe(true);
      expect(await records.get(key)).toBe('again');
    });

    it('gives a value back as it was kept: 1 MiB, quotes, backslashes, unicode, line breaks', async () => {
      const key = randomUUID();
      const tail = `"'\\\\ \\n ключ 🔒 \u0001 $1 %s`;
      const value = 'x'.repeat(1024 * 1024 - tail.length) + tail;
      expect(await records.put(key, value, 60_000)).toBe(true);
      expect(await other.get(key)).toBe(value);
    });

    it('keeps records of other keys apart, however alike the keys look', async () => {
      const keys = ['a', 'A', 'a ', 'a:b', 'a%', 'a_', `${randomUUID()}`];
      for (const key of keys) expect(await records.put(`k-${key}`, `v-${key}`, 60_000)).toBe(true);
      for (const key of keys) expect(await other.get(`k-${key}`)).toBe(`v-${key}`);
    });
  });
}
