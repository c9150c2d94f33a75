import calculateSlot from 'cluster-key-slot';
import { resourceKeys, unescapeKey } from './resource-keys.js';

/** Every string of up to `length` characters over `alphabet`. */
function allStrings(alphabet: readonly string[], length: number): string[] {
  let level = [''];
  const all = [''];
  for (let i = 0; i < length; i++) {
    level = level.flatMap((prefix) => alphabet.map((char) => prefix + char));
    all.push(...level);
  }
  return all;
}

/** Characters that can break a naive layout: the hash-tag braces, the escape character and what it writes. */
const TRICKY = ['{', '}', '%', '7', 'B', 'D', '2', '5', 'a', ':'];
const KEYS = [
  ...allStrings(TRICKY, 4).filter((key) => key !== ''),
  'a}:fence',
  'a:fence',
  'a}:holder',
  'a:holder',
  'x}:released',
  '}:fence{',
  'ключ:🔒',
  'line\nbreak',
  'k'.repeat(1024),
];

describe('resourceKeys', () => {
  it('puts the lock, its fence counter, its line of waiters with their offers, its release channel and its revoked tokens under one hash tag after the prefix', () => {
    expect(resourceKeys('lock:', 'orders:42')).toEqual({
      lock: 'lock:{orders:42}',
      fence: 'lock:{orders:42}:fence',
      line: 'lock:{orders:42}:waiters',
      channel: 'lock:{orders:42}:released',
      revoked: 'lock:{orders:42}:revoked',
    });
  });

  it('escapes braces and the escape character itself inside the tag', () => {
    expect(resourceKeys('lock:', 'a{b}c%d').lock).toBe('lock:{a%7Bb%7Dc%25d}');
  });

  it('never gives two user keys the same name, nor one key a name of another (thousands of tricky keys)', () => {
    const owners = new Map<string, string>();
    const clashes: string[] = [];
    for (const key of KEYS) {
      for (const name of Object.values(resourceKeys('lock:', key))) {
        const owner = owners.get(name);
        if (owner !== undefined && owner !== key) clashes.push(`${JSON.stringify(owner)} and ${JSON.stringify(key)}`);
        owners.set(name, key);
      }
    }
    expect(clashes).toEqual([]);
    expect(owners.size).toBe(KEYS.length * Object.keys(resourceKeys('lock:', 'k')).length);
  });

  it('can be read back to the user key, so the escaping loses nothing', () => {
    const lost = KEYS.filter((key) => {
      const tag = /^lock:\{(.*)\}$/s.exec(resourceKeys('lock:', key).lock)?.[1];
      if (tag === undefined || /[{}]/.test(tag)) return true;
      return unescapeKey(tag) !== key;
    });
    expect(lost).toEqual([]);
  });

  it('keeps the names of every key in one Redis Cluster hash slot', () => {
    const split: string[] = [];
    for (const prefix of ['lock:', '', 'app:v2:locks:']) {
      for (const key of KEYS) {
        const names = resourceKeys(prefix, key);
        const slot = calculateSlot(names.lock);
        if ([names.fence, names.line, names.channel, names.revoked].some((name) => calculateSlot(name) !== slot)) {
          split.push(prefix + key);
        }
      }
    }
    expect(split).toEqual([]);
  });
});
