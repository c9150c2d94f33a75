/**
 * `sql` with its parameters `$1`, `$2`, ... written in as literals, for a message of several statements
 * (the simple query protocol takes no parameters): the permits send `BEGIN`, the lock and the read in one
 * round trip, and each statement of such a message reads with a snapshot of its own, taken once the one
 * before it has finished (in READ COMMITTED), so the read sees what the last holder of the lock committed.
 * Strings are quoted as node-postgres' `escapeLiteral` does (quotes and backslashes doubled, `E''` form when
 * a backslash is in them); objects go in as JSON text; numbers must be finite.
 */
export function inlineSql(sql: string, values: readonly unknown[]): string {
  return sql.replace(/\$(\d+)/g, (_, index: string) => literal(values[Number(index) - 1]));
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError('a SQL literal must be a finite number');
    return String(value);
  }
  return quote(typeof value === 'string' ? value : JSON.stringify(value));
}

function quote(text: string): string {
  let backslash = false;
  let quoted = "'";
  for (const char of text) {
    if (char === "'") quoted += "''";
    else if (char === '\\') {
      quoted += '\\\\';
      backslash = true;
    } else quoted += char;
  }
  quoted += "'";
  return backslash ? ` E${quoted}` : quoted;
}
