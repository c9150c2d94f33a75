import { setTimeout as sleep } from 'node:timers/promises';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import { listLocks, MAX_LIST_LIMIT } from '../listing/lock-listing.js';
import { printable } from '../utils/printable.js';
import { lockTable } from './lock-table.js';

/** Moves the cursor home and clears the screen: each frame replaces the last on a terminal. */
const CLEAR = '\u001b[H\u001b[2J';
/** Ctrl-C as a terminal in raw mode sends it. */
const CTRL_C = '\u0003';

/** What `watch` draws, where, and how often. */
export interface WatchOptions {
  readonly prefix?: string;
  /** ms between two frames. */
  readonly interval: number;
  readonly output: NodeJS.WriteStream;
  readonly input: NodeJS.ReadStream;
}

/**
 * Draws the held locks as a table every `interval` until `q` (or Ctrl-C) is typed or the process gets SIGINT or
 * SIGTERM; resolves once stopped, with every listener it added removed. Each frame starts with a heading line
 * (`nestjs-lock watch: N held ...`); on a terminal it first clears the screen. A store that fails is shown in
 * the frame, and the next frame tries again: an outage is when an operator most needs to keep watching.
 */
export async function watchLocks(store: LockStore, options: WatchOptions): Promise<void> {
  const { input, output } = options;
  const stopped = new AbortController();
  const stop = (): void => stopped.abort();
  const onKey = (chunk: Buffer | string): void => {
    const text = chunk.toString();
    if (text.includes('q') || text.includes(CTRL_C)) stop();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  if (input.isTTY) input.setRawMode(true);
  input.on('data', onKey);
  try {
    while (!stopped.signal.aborted) {
      output.write(await frame(store, options));
      await sleep(options.interval, undefined, { signal: stopped.signal }).catch(() => undefined);
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    input.off('data', onKey);
    if (input.isTTY) input.setRawMode(false);
    input.pause();
  }
}

/** One frame: the heading, then the table or why the store could not be read. */
async function frame(store: LockStore, options: WatchOptions): Promise<string> {
  const start = options.output.isTTY ? CLEAR : '';
  const every = `every ${options.interval} ms, q quits`;
  try {
    const { locks, cursor } = await listLocks(store, {
      limit: MAX_LIST_LIMIT,
      ...(options.prefix ? { prefix: options.prefix } : {}),
    });
    const more = cursor ? ' (more not shown: narrow with --prefix)' : '';
    const heading = `nestjs-lock watch: ${locks.length} held${more} at ${new Date().toISOString()}, ${every}\n`;
    return `${start}${heading}${lockTable(locks)}`;
  } catch (error) {
    const why = printable(error instanceof Error ? error.message : String(error));
    return `${start}nestjs-lock watch: the store failed at ${new Date().toISOString()}, ${every}\n${why}\n`;
  }
}
