import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { validateBoolean, validateInteger, validateKey, validateKeyPrefix } from './validate-options.js';

/** The error `fn` throws, or a failure when it throws none. */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error, none was thrown');
}

/** True when `text` has no lone UTF-16 surrogate (half of an emoji), which would print as garbage. */
function isWellFormed(text: string): boolean {
  return Buffer.from(text, 'utf8').toString('utf8') === text;
}

describe('validateKey', () => {
  it('accepts a key up to the limit, counted in UTF-8 bytes', () => {
    expect(validateKey('orders:42', 1024)).toBe('orders:42');
    expect(validateKey('k'.repeat(1024), 1024)).toBe('k'.repeat(1024));
    expect(validateKey('🔒'.repeat(256), 1024)).toBe('🔒'.repeat(256));
    expect(validateKey('é'.repeat(512), 1024)).toBe('é'.repeat(512));
  });

  it.each<[string, unknown]>([
    ['an empty string', ''],
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['an object', { id: 1 }],
    ['an array', ['orders', 1]],
  ])('refuses %s with a LockKeyError', (_label, key) => {
    const error = thrown(() => validateKey(key, 1024));
    expect(error).toBeInstanceOf(LockKeyError);
    expect((error as LockKeyError).code).toBe('LOCK_KEY_INVALID');
    expect(error.message).toMatch(/non-empty string/);
  });

  it('counts three-byte characters exactly at the limit, where a key is no longer short enough to skip counting', () => {
    expect(validateKey('€'.repeat(341), 1024)).toBe('€'.repeat(341));
    expect(validateKey(`${'€'.repeat(341)}k`, 1024)).toBe(`${'€'.repeat(341)}k`);
    expect(thrown(() => validateKey('€'.repeat(342), 1024))).toBeInstanceOf(LockKeyError);
    expect(thrown(() => validateKey(`${'€'.repeat(341)}kk`, 1024))).toBeInstanceOf(LockKeyError);
  });

  it('refuses a key over the limit by one byte', () => {
    expect(thrown(() => validateKey('k'.repeat(1025), 1024))).toBeInstanceOf(LockKeyError);
  });

  it('refuses a 300-emoji key with a 1024-byte limit: 300 characters, but 1200 bytes', () => {
    const key = '🔒'.repeat(300);
    const error = thrown(() => validateKey(key, 1024));
    expect(error).toBeInstanceOf(LockKeyError);
    expect(error.message).toContain('1200 bytes');
    expect(error.message).toContain('1024');
    expect(error.message).toContain('maxKeyLength');
  });

  it('refuses 600 accented letters (600 UTF-16 units, 1200 bytes) with a 1024-byte limit', () => {
    expect(thrown(() => validateKey('é'.repeat(600), 1024))).toBeInstanceOf(LockKeyError);
  });

  it('shows only the start of a refused key, without cutting a character in half', () => {
    const key = `a${'🔒'.repeat(600)}`;
    const error = thrown(() => validateKey(key, 1024));
    expect(error.message.length).toBeLessThan(300);
    expect(isWellFormed(error.message)).toBe(true);
  });
});

describe('validateKeyPrefix', () => {
  it('accepts a printable prefix without glob characters or braces, unicode included', () => {
    expect(validateKeyPrefix('lock:')).toBe('lock:');
    expect(validateKeyPrefix('shop:verrou:é:')).toBe('shop:verrou:é:');
    expect(validateKeyPrefix('a b')).toBe('a b');
  });

  it.each<[string, string, RegExp]>([
    ['the empty prefix', '', /non-empty/],
    ['a new line', 'a\nb:', /printable/],
    ['an escape character', '\u001b[31m', /printable/],
    ['a star', '*', /SCAN MATCH/],
    ['a question mark', 'lock?:', /SCAN MATCH/],
    ['square brackets', 'lock[1]:', /SCAN MATCH/],
    ['a backslash', 'lock\\:', /SCAN MATCH/],
    ['an opening brace', '{', /hash tag/],
    ['a closing brace', 'a}b', /hash tag/],
    ['a hash tag', 'app:{tenant}:', /hash tag/],
  ])('refuses %s with the reason', (_label, prefix, reason) => {
    const error = thrown(() => validateKeyPrefix(prefix));
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as LockConfigurationError).option).toBe('keyPrefix');
    expect(error.message).toMatch(reason);
    expect(error.message).not.toMatch(/[\n\u001b]/);
  });

  it.each([undefined, null, 42, {}])('refuses the non-string %p', (prefix) => {
    expect(thrown(() => validateKeyPrefix(prefix))).toBeInstanceOf(LockConfigurationError);
  });
});

describe('validateInteger and validateBoolean', () => {
  it('accept whole numbers within bounds and booleans', () => {
    expect(validateInteger('maxKeyLength', 1, 1, 10)).toBe(1);
    expect(validateInteger('maxKeyLength', 10, 1, 10)).toBe(10);
    expect(validateBoolean('fencing', false)).toBe(false);
  });

  it.each([0, 11, 1.5, NaN, Infinity, '5', null, undefined])('refuse %p for a number from 1 to 10', (value) => {
    const error = thrown(() => validateInteger('maxKeyLength', value, 1, 10));
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as LockConfigurationError).option).toBe('maxKeyLength');
    expect(Object.is((error as LockConfigurationError).value, value)).toBe(true);
  });

  it.each(['true', 1, 0, null, undefined])('refuse %p for a boolean', (value) => {
    const error = thrown(() => validateBoolean('autoRenew', value));
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as LockConfigurationError).option).toBe('autoRenew');
  });
});
