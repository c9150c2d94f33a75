import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { MAX_DURATION, type Duration } from '../utils/duration.js';
import { toMilliseconds, type DurationRange } from './duration-option.js';

/** The error `toMilliseconds` throws for `value`, or a failure when it throws none. */
function refusal(value: unknown, option = 'ttl', range?: DurationRange): LockConfigurationError {
  try {
    toMilliseconds(value as Duration, option, range);
  } catch (error) {
    expect(error).toBeInstanceOf(LockConfigurationError);
    return error as LockConfigurationError;
  }
  throw new Error(`toMilliseconds accepted ${String(value)}`);
}

describe('toMilliseconds', () => {
  it.each<[Duration, number]>([
    [1, 1],
    [30_000, 30_000],
    ['500ms', 500],
    ['30s', 30_000],
    ['1.5s', 1500],
    ['5m', 300_000],
    ['1h', 3_600_000],
    [' 30s ', 30_000],
    [MAX_DURATION, MAX_DURATION],
    [`${MAX_DURATION}ms`, MAX_DURATION],
  ])('reads %p as %p ms', (value, ms) => {
    expect(toMilliseconds(value, 'ttl')).toBe(ms);
  });

  it.each<[string, number]>([
    ['2.01s', 2010],
    ['8.05s', 8050],
    ['16.1s', 16_100],
    ['0.001s', 1],
    ['4.1m', 246_000],
    ['1.1h', 3_960_000],
  ])('reads the decimal %p exactly as %p ms, without floating-point error', (value, ms) => {
    expect(toMilliseconds(value, 'ttl')).toBe(ms);
  });

  it('accepts zero only for options where it means something (wait: 0 fails fast)', () => {
    expect(toMilliseconds(0, 'wait', { zero: 'allowed' })).toBe(0);
    expect(toMilliseconds('0s', 'wait', { zero: 'allowed' })).toBe(0);
    expect(refusal(0, 'ttl').option).toBe('ttl');
    expect(refusal('0ms', 'ttl').option).toBe('ttl');
  });

  it.each<[unknown, string]>([
    [0, 'got 0'],
    [-1, 'got -1'],
    [-0.5, 'got -0.5'],
    [NaN, 'got NaN'],
    [Infinity, 'got Infinity'],
    [-Infinity, 'got -Infinity'],
    [1.5, 'got 1.5'],
    ['10x', 'got the string "10x"'],
    ['', 'got the string ""'],
    ['  ', 'got the string "  "'],
    ['ms', 'got the string "ms"'],
    ['10', 'got the string "10"'],
    ['-5s', 'got the string "-5s"'],
    ['1e3ms', 'got the string "1e3ms"'],
    ['1.5ms', 'got the string "1.5ms"'],
    ['0.0001s', 'got the string "0.0001s"'],
    ['25d', 'got the string "25d"'],
    [null, 'got null'],
    [undefined, 'got undefined'],
    [true, 'got true'],
    [{}, 'got Object'],
    [[30], 'got an array'],
  ])('refuses %p with a LockConfigurationError that names the option and the value', (value, shown) => {
    const error = refusal(value, 'defaults.ttl');
    expect(error.code).toBe('LOCK_CONFIGURATION');
    expect(error.option).toBe('defaults.ttl');
    expect(Object.is(error.value, value)).toBe(true);
    expect(error.message).toContain('"defaults.ttl"');
    expect(error.message).toContain(shown);
  });

  it.each<[Duration, string]>([
    [MAX_DURATION + 1, `got ${MAX_DURATION + 1}`],
    [`${MAX_DURATION + 1}ms`, `got the string "${MAX_DURATION + 1}ms"`],
    ['597h', 'got the string "597h"'],
    [Number.MAX_SAFE_INTEGER, `got ${Number.MAX_SAFE_INTEGER}`],
  ])('refuses %p, past the 2^31-1 ms a Node timer can wait', (value, shown) => {
    const error = refusal(value, 'wait', { zero: 'allowed' });
    expect(error.option).toBe('wait');
    expect(error.message).toContain(shown);
    expect(error.message).toContain(String(MAX_DURATION));
  });
});
