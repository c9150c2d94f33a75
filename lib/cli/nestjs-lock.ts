#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { loadIoredis } from '../stores/redis/load-ioredis.js';
import { describeLock, listLocks } from '../listing/lock-listing.js';
import { forceRelease } from '../listing/force-release.js';
import { RedisLockStore } from '../stores/redis/redis.store.js';
import type { LockSummary } from '../interfaces/lock-summary.interface.js';

/** Exit codes a script can branch on. */
const EXIT = { ok: 0, failed: 1, usage: 2, notHeld: 3 } as const;

const USAGE = `Usage: nestjs-lock <command> --redis URL [--key-prefix lock:]
  ls [--prefix P] [--json]     the held locks
  inspect KEY                  one lock (exit 3 while it is free)
  release KEY --force          force-release KEY and raise its fence (refused without --force)`;

/** One line of `ls`: the key, its kind, holders and waiters. */
function line(lock: LockSummary): string {
  const holders = lock.holders.map((holder) => `${holder.label ?? '-'}@${holder.host ?? '?'}:${holder.pid ?? '?'}`);
  return `${lock.key}\t${lock.kind}\t${holders.join(',')}\twaiters=${lock.waiters}`;
}

/** Runs one command; resolves to the exit code. */
async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      redis: { type: 'string' },
      'key-prefix': { type: 'string', default: 'lock:' },
      prefix: { type: 'string' },
      json: { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
    },
  });
  const [command, key] = positionals;
  if (!values.redis || !['ls', 'inspect', 'release'].includes(command ?? '') || (command !== 'ls' && !key)) {
    process.stderr.write(`${USAGE}\n`);
    return EXIT.usage;
  }
  if (command === 'release' && !values.force) {
    process.stderr.write('Refused: a forced release ends the lease of a running holder; add --force to mean it.\n');
    return EXIT.usage;
  }
  const store = new RedisLockStore({
    client: new (await loadIoredis('--redis', values.redis)).Redis(values.redis, { maxRetriesPerRequest: 1 }),
    keyPrefix: values['key-prefix'],
    ownsClient: true,
    releaseNotices: false,
  });
  try {
    if (command === 'ls') {
      const { locks } = await listLocks(store, { ...(values.prefix ? { prefix: values.prefix } : {}), limit: 1000 });
      process.stdout.write(
        values.json ? `${JSON.stringify({ locks })}\n` : locks.map((lock) => `${line(lock)}\n`).join(''),
      );
      return EXIT.ok;
    }
    if (command === 'inspect') {
      const lock = await describeLock(store, key);
      if (!lock) {
        process.stderr.write('Not held.\n');
        return EXIT.notHeld;
      }
      process.stdout.write(`${JSON.stringify(lock, null, 2)}\n`);
      return EXIT.ok;
    }
    const forced = await forceRelease(store, key, { by: 'the nestjs-lock CLI', showKey: true });
    process.stdout.write(`${JSON.stringify(forced)}\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(EXIT.failed);
  },
);
