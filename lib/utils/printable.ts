/**
 * Control characters (C0, DEL, C1), the Unicode line and paragraph separators, and the bidirectional
 * overrides and isolates: what can end a log line early, forge a new one, move the cursor or reorder
 * what a terminal shows.
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeCharacter(char: string): string {
  return SHORT_ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `text` safe to put in one log line: control characters, line separators and bidirectional controls
 * become escapes (`\n`, `\r`, `\t`, `\u001b`, ...); everything else, other scripts and emoji included, is
 * kept. Applying it twice changes nothing more.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escapeCharacter);
}

/**
 * `text` in double quotes, as every message of this package names a key, a label or a template: printable
 * (see {@link printable}), with `"` and `\` escaped too, so a value can neither end its quotes early nor
 * forge what follows them.
 */
export function quoted(text: string): string {
  return `"${printable(text.replace(/["\\]/g, (char) => `\\${char}`))}"`;
}
