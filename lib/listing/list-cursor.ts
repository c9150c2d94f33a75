import { LockConfigurationError } from '../errors/lock-configuration.error.js';

/**
 * The cursor `LockService.list` hands out: the store's own cursor and the prefix it was read under, as JSON in
 * base64url. A store's cursor alone is often any text (a last key), so without this wrapping a mistyped or
 * truncated cursor would silently list from the start, and a cursor of one prefix would go on under another.
 */
export function writeListCursor(prefix: string, storeCursor: string): string {
  return Buffer.from(JSON.stringify([prefix, storeCursor])).toString('base64url');
}

/**
 * The store's cursor inside a cursor `writeListCursor` made for `prefix`.
 * @throws LockConfigurationError when `cursor` is not one, or was made for another prefix
 */
export function readListCursor(prefix: string, cursor: string): string {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parts = undefined;
  }
  if (!Array.isArray(parts) || parts.length !== 2 || !parts.every((part) => typeof part === 'string')) {
    throw new LockConfigurationError('cursor', cursor, 'expected the cursor an earlier page of list() returned');
  }
  const [madeFor, storeCursor] = parts as [string, string];
  if (madeFor !== prefix) {
    throw new LockConfigurationError(
      'cursor',
      cursor,
      `it continues a listing under the prefix ${JSON.stringify(madeFor)}: pass that prefix with it`,
    );
  }
  return storeCursor;
}
