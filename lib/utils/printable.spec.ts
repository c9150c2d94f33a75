import { printable, quoted } from './printable.js';

describe('printable and quoted', () => {
  it('escape what could end or forge a log line, and keep every other character', () => {
    expect(printable('a\r\nb\tc\u001b[31md\u0000\u007f\u0085\u2028\u202e')).toBe(
      'a\\r\\nb\\tc\\u001b[31md\\u0000\\u007f\\u0085\\u2028\\u202e',
    );
    expect(printable('ключ:🔒 é')).toBe('ключ:🔒 é');
    expect(printable(printable('a\nb'))).toBe('a\\nb');
  });

  it('quote a value so that it can neither end its quotes nor start a new line', () => {
    expect(quoted('inventory:42')).toBe('"inventory:42"');
    expect(quoted('x" forged="y')).toBe('"x\\" forged=\\"y"');
    expect(quoted('a\\b\nc')).toBe('"a\\\\b\\nc"');
  });
});
