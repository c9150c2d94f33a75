import { KeyTemplate } from './key-template.js';

/** Every string of 1 to `length` characters over `alphabet`. */
function strings(alphabet: readonly string[], length: number): string[] {
  let level = [''];
  const all: string[] = [];
  for (let i = 0; i < length; i++) {
    level = level.flatMap((prefix) => alphabet.map((char) => prefix + char));
    all.push(...level);
  }
  return all;
}

/** Every tuple of `size` values from `values`. */
function tuples(values: readonly string[], size: number): string[][] {
  let result: string[][] = [[]];
  for (let i = 0; i < size; i++) result = result.flatMap((tuple) => values.map((value) => [...tuple, value]));
  return result;
}

describe('key value encoding', () => {
  it('gives the tuples (x:y, z) and (x, y:z) two different keys', () => {
    const template = new KeyTemplate('pair:<a>:<b>');
    expect(template.render(['x:y', 'z'])).toBe('pair:x%3Ay:z');
    expect(template.render(['x', 'y:z'])).toBe('pair:x:y%3Az');
  });

  it('keeps plain values readable: letters, digits and characters the template does not use', () => {
    expect(new KeyTemplate('inventory:<id>').render(['42'])).toBe('inventory:42');
    expect(new KeyTemplate('inventory:<id>').render(['shoe-red_44.5'])).toBe('inventory:shoe-red_44.5');
    expect(new KeyTemplate('inventory:<id>').render(['ключ 🔒'])).toBe('inventory:ключ 🔒');
    expect(new KeyTemplate('user/<id>').render(['a:b'])).toBe('user/a:b');
  });

  it('escapes % and every separator of the template as UTF-8 bytes, not letters or digits of its text', () => {
    const template = new KeyTemplate('stock→<sku>:v2');
    expect(template.render(['50%:→s'])).toBe('stock→50%25%3A%E2%86%92s:v2');
  });

  it('escapes a letter that begins the text between two placeholders, and only there', () => {
    const template = new KeyTemplate('<a>x<b>');
    expect(template.render(['1x2', 'x3'])).toBe('1%782x%783');
    expect(new KeyTemplate('x:<a>').render(['x'])).toBe('x:x');
  });

  it('escapes lone surrogates, which Redis would otherwise receive as one and the same U+FFFD', () => {
    const template = new KeyTemplate('doc:<id>');
    expect(template.render(['a\ud800'])).toBe('doc:a%ED%A0%80');
    expect(template.render(['a\udfff'])).toBe('doc:a%ED%BF%BF');
    expect(template.render(['\ufffd'])).toBe('doc:\ufffd');
  });

  it.each(['pair:<a>:<b>', '<a>:<b>', '<a>x<b>', '<a>:%<b>', 'k<a>-:<b>%'])(
    'gives every pair of short values over separators, escapes and letters its own key with %s',
    (text) => {
      const template = new KeyTemplate(text);
      const values = strings(['x', ':', '%', '3', 'A', '-'], 3);
      const keys = new Set(tuples(values, 2).map((tuple) => template.render(tuple)));
      expect(keys.size).toBe(values.length ** 2);
    },
  );

  it('gives every triple its own key when the separators differ between placeholders', () => {
    const template = new KeyTemplate('t:<a>-<b>/<c>');
    const values = strings(['-', '/', '%', '2'], 2);
    const keys = new Set(tuples(values, 3).map((tuple) => template.render(tuple)));
    expect(keys.size).toBe(values.length ** 3);
  });
});
