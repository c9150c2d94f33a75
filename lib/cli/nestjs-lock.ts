#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { isLockError } from '../errors/lock.error.js';
import { describeLock, listLocks, MAX_LIST_LIMIT } from '../listing/lock-listing.js';
import { forceRelease } from '../listing/force-release.js';
import { toMilliseconds } from '../options/duration-option.js';
import { connectStore } from './cli-store.js';
import { lockLines } from './lock-table.js';
import { watchLocks } from './watch.js';

/** Exit codes a script can branch on (docs/operations.md lists them). */
const EXIT = { ok: 0, failed: 1, usage: 2, notHeld: 3, store: 4 } as const;

const USAGE = `Usage: nestjs-lock <command> (--redis URL | --postgres URL | --etcd HOSTS) [--key-prefix lock:]
  ls [--prefix P] [--json]               the held locks
  inspect KEY                            one lock (exit 3 while it is free)
  release KEY --force                    force-release KEY and raise its fence (refused without --force)
  watch [--prefix P] [--interval 2s]     the held locks, redrawn every interval; q or Ctrl-C quits
Exit codes: 0 done, 1 failed, 2 usage or bad option, 3 not held, 4 the store failed or was unreachable.`;

const COMMANDS = ['ls', 'inspect', 'release', 'watch'];
/** The shortest time between two frames of `watch`, in ms: each frame reads the whole listing. */
const MIN_INTERVAL = 100;

/** Runs one command; resolves to the exit code. */
async function main(argv: string[]): Promise<number> {
  if (argv.some((arg) => arg === '--help' || arg === '-h') || argv[0] === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      redis: { type: 'string' },
      postgres: { type: 'string' },
      etcd: { type: 'string' },
      'key-prefix': { type: 'string', default: 'lock:' },
      prefix: { type: 'string' },
      json: { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
      interval: { type: 'string', default: '2s' },
    },
  });
  const [command, key] = positionals;
  if (!COMMANDS.includes(command ?? '') || ((command === 'inspect' || command === 'release') && !key)) {
    process.stderr.write(`${USAGE}\n`);
    return EXIT.usage;
  }
  if (command === 'release' && !values.force) {
    process.stderr.write('Refused: a forced release ends the lease of a running holder; add --force to mean it.\n');
    return EXIT.usage;
  }
  const interval = toMilliseconds(values.interval, '--interval');
  if (interval < MIN_INTERVAL) {
    throw new LockConfigurationError('--interval', values.interval, `expected at least ${MIN_INTERVAL} ms`);
  }
  const store = await connectStore({ ...values, keyPrefix: values['key-prefix'] });
  const prefix = values.prefix ? { prefix: values.prefix } : {};
  try {
    if (command === 'watch') {
      await watchLocks(store, { ...prefix, interval, output: process.stdout, input: process.stdin });
      return EXIT.ok;
    }
    if (command === 'ls') {
      const { locks } = await listLocks(store, { ...prefix, limit: MAX_LIST_LIMIT });
      process.stdout.write(values.json ? `${JSON.stringify({ locks })}\n` : lockLines(locks));
      // on stderr, so that scripts reading stdout see no line: the most common cause is another key prefix
      if (locks.length === 0 && !values.json) {
        process.stderr.write(
          `No lock is held under the key prefix ${JSON.stringify(values['key-prefix'])}` +
            `${values.prefix ? ` and ${JSON.stringify(values.prefix)}` : ''}; ` +
            "give --key-prefix with your module's keyPrefix.\n",
        );
      }
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

/** The exit code of a failure: a bad option is usage, a store that failed or did not answer its own code. */
function exitCodeOf(error: unknown): number {
  const code = (error as { code?: unknown } | null)?.code;
  if (isLockError(error, 'LOCK_CONFIGURATION') || String(code).startsWith('ERR_PARSE_ARGS')) return EXIT.usage;
  return isLockError(error, 'LOCK_STORE_ERROR') ? EXIT.store : EXIT.failed;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const exitCode = exitCodeOf(error);
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    // an option parseArgs does not know: show the ones it does
    if (String((error as { code?: unknown } | null)?.code).startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${USAGE}\n`);
    }
    process.exit(exitCode);
  },
);
