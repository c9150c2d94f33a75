import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { KeyTemplate } from './key-template.js';

describe('KeyTemplate parsing', () => {
  it('splits a template into literal text and placeholders with their paths', () => {
    const template = new KeyTemplate('order:<dto.customer.id>/<0>:<headers.x-tenant>');
    expect(template.literals).toEqual(['order:', '/', ':', '']);
    expect(template.placeholders).toEqual([
      { text: 'dto.customer.id', head: 'dto', path: ['customer', 'id'] },
      { text: '0', head: '0', path: [] },
      { text: 'headers.x-tenant', head: 'headers', path: ['x-tenant'] },
    ]);
  });

  it('accepts a template without placeholders as one fixed key', () => {
    const template = new KeyTemplate('report:nightly');
    expect(template.placeholders).toEqual([]);
    expect(template.render([])).toBe('report:nightly');
  });

  it.each([
    ['an empty template', ''],
    ['an unbalanced placeholder', 'a:<id'],
    ['a stray ">"', 'a:id>'],
    ['an empty placeholder', 'a:<>'],
    ['an empty path segment', 'a:<dto..id>'],
    ['a segment with spaces around it', 'a:<dto. id>'],
    ['a lone surrogate', 'a\ud800:<id>'],
  ])('refuses %s', (_name, template) => {
    expect(() => new KeyTemplate(template)).toThrow(LockConfigurationError);
  });

  it('refuses two placeholders with no literal text between them, naming both', () => {
    expect(() => new KeyTemplate('pair:<a><b>')).toThrow(/<a> and <b> need literal text between them/);
  });

  it('refuses text between two placeholders that begins with the escape character', () => {
    expect(() => new KeyTemplate('pair:<a>%25<b>')).toThrow(/must not begin with "%"/);
    expect(() => new KeyTemplate('rate:100%:<a>')).not.toThrow();
  });
});

describe('KeyTemplate values', () => {
  it('writes strings, finite numbers, bigints and booleans as they are', () => {
    const template = new KeyTemplate('inventory:<id>');
    expect(template.render(['42'])).toBe('inventory:42');
    expect(template.render([42])).toBe('inventory:42');
    expect(template.render([42n])).toBe('inventory:42');
    expect(template.render([true])).toBe('inventory:true');
    expect(template.render(['A-1_b.c'])).toBe('inventory:A-1_b.c');
  });

  it.each([
    ['nothing', undefined],
    ['null', null],
    ['an empty string', ''],
    ['an object', { id: 1 }],
    ['an array', ['a']],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a function', () => 'x'],
  ])('refuses %s with a LockKeyError naming the template and placeholder, not the value', (_name, value) => {
    const template = new KeyTemplate('inventory:<sku>');
    const error = (() => {
      try {
        template.render([value]);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(LockKeyError);
    expect((error as LockKeyError).template).toBe('inventory:<sku>');
    expect((error as Error).message).toMatch(/"inventory:<sku>": placeholder <sku> resolved to/);
  });
});
