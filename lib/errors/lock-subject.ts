import { quoted } from '../utils/printable.js';

/**
 * How a message or a log line starts about one lock: `Lock "inventory:<productId>"` by the name it may show
 * (its key template, or its resolved key where the application opted in), or `The lock` when it may show none.
 */
export function lockSubject(name: string | undefined): string {
  return name === undefined ? 'The lock' : `Lock ${quoted(name)}`;
}
