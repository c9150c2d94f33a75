/**
 * How placeholder values are written into a key so that one template never gives two value tuples the
 * same key, while plain values stay as they are (`inventory:42`).
 *
 * A value is written with UTF-8 `%XX` escapes for `%`, for every character of the template's literal text
 * other than ASCII letters and digits (its separators), and for the first character of each literal that
 * stands between two placeholders; lone surrogates are escaped too, as the bytes they are in WTF-8, because
 * Redis receives keys as UTF-8, where every lone surrogate would become the same U+FFFD.
 *
 * Why this is injective, for a template `L0 <p1> L1 <p2> ... <pn> Ln` whose inner literals L1..L(n-1) are
 * non-empty and do not begin with `%` (both checked when the template is parsed): an encoded value never
 * contains a raw `%` except at the start of an escape, and never the first character c of any inner
 * literal (it is escaped, and c is not `%`). So in a key, once the fixed L0 is removed, the encoded first
 * value ends exactly before the first c of L1 that follows it; two tuples with one key therefore have the
 * same encoded first value, hence the same first value (the escapes decode back, `%` included); removing
 * it and L1, the same argument holds for the next value, and the last one is what remains before Ln.
 */
export class KeyValueEncoder {
  /** Matches each character a value must escape; lone surrogates are `\p{Cs}` in a `u` pattern. */
  private readonly escaped: RegExp;
  /** The escape of each character of the template's set, written once. */
  private readonly escapes = new Map<string, string>();

  /** @param literals the literal texts of a template, `L0` to `Ln` */
  constructor(literals: readonly string[]) {
    const escaped = new Set<string>(['%']);
    for (const literal of literals) {
      for (const char of literal) if (!/^[A-Za-z0-9]$/.test(char)) escaped.add(char);
    }
    for (const inner of literals.slice(1, -1)) {
      const [first] = inner;
      if (first !== undefined) escaped.add(first);
    }
    for (const char of escaped) this.escapes.set(char, percentBytes(char));
    const chars = [...escaped].map((char) => `\\u{${(char.codePointAt(0) as number).toString(16)}}`).join('');
    this.escaped = new RegExp(`[${chars}]|\\p{Cs}`, 'gu');
  }

  /** `value` with every character this template escapes written as `%XX` bytes. */
  encode(value: string): string {
    return value.replace(this.escaped, (char) => this.escapes.get(char) ?? percentBytes(char));
  }
}

function isLoneSurrogate(char: string): boolean {
  // a `u` pattern matches a surrogate on its own only when it has no partner
  const code = char.charCodeAt(0);
  return char.length === 1 && code >= 0xd800 && code <= 0xdfff;
}

function percentBytes(char: string): string {
  const bytes = isLoneSurrogate(char) ? wtf8(char.charCodeAt(0)) : [...Buffer.from(char, 'utf8')];
  return bytes.map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/** The three bytes a surrogate code unit has in WTF-8 (UTF-8 rules applied to it as if it were a code point). */
function wtf8(code: number): number[] {
  return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)];
}
