// One instance campaigning for the leadership "jobs", for leader.spec.ts. While it leads, it enters the
// checkers' FencedResource with its term and writes to it with that term every 50 ms, until its term's signal
// aborts; then it tries one more write with the old term (what a paused leader would do on waking) and says how
// the resource answered. Lines out: `elected <term>`, `aborted <reason>`, `late write accepted|refused`,
// `resigned`, `threw`. Lines in: `throw` (the function throws on its next write), `stop`. SIGTERM closes the
// manager (resigning) and exits; it exits too when the test process closes its stdin.
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockManager } from '../../lib/core/lock-manager.js';
import type { LockLostError } from '../../lib/errors/lock-lost.error.js';
import type { LockStore } from '../../lib/interfaces/lock-store.interface.js';
import { EtcdLockStore } from '../../lib/stores/etcd/etcd-lock-store.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import { FencedResource } from '../support/invariants.js';

const { ID, LOCK_URL, ETCD_HOSTS, KEY_PREFIX, DATA_URL, CHECKER_PREFIX, TTL } = process.env as Record<string, string>;

const lockClient = ETCD_HOSTS
  ? undefined
  : new Redis(LOCK_URL, { maxRetriesPerRequest: 1, commandTimeout: 1000, connectTimeout: 1000 });
// the store's restart is part of the test: failures surface through the commands
lockClient?.on('error', () => undefined);
const store: LockStore = lockClient
  ? new RedisLockStore({ client: lockClient, keyPrefix: KEY_PREFIX, ownsClient: true })
  : new EtcdLockStore({ hosts: JSON.parse(ETCD_HOSTS) as string[], keyPrefix: KEY_PREFIX, timeout: 1000 });
const data = new Redis(DATA_URL);
const resource = new FencedResource(data, CHECKER_PREFIX);
const manager = new LockManager({ store, logger: { warn: () => undefined, error: () => undefined } });

let throwNext = false;
let terms = 0;
const handle = manager.lead(
  'jobs',
  async ({ term, signal }) => {
    const sid = `${ID}:${++terms}`;
    signal.addEventListener('abort', () => {
      const { reason } = signal.reason as LockLostError;
      console.log(`aborted ${reason}`);
      if (reason !== 'resigned') void resource.lost(sid, reason);
    });
    await resource.enter(sid, term);
    console.log(`elected ${term}`);
    let value = 0;
    while (!signal.aborted) {
      if (throwNext) {
        throwNext = false;
        await resource.exit(sid, { exitedAt: Date.now(), unfenced: 'skipped', fenced: 'accepted', heldAtExit: true });
        console.log('threw');
        throw new Error('the job failed');
      }
      await resource.write(term, ++value);
      await sleep(50);
    }
    const late = await resource.write(term, ++value);
    console.log(`late write ${late ? 'accepted' : 'refused'}`);
    await resource.exit(sid, { exitedAt: Date.now(), unfenced: 'skipped', fenced: 'accepted', heldAtExit: false });
  },
  { ttl: Number(TTL), backoff: 200 },
);
manager.on('resigned', () => console.log('resigned'));

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line === 'throw') throwNext = true;
  if (line === 'stop') void handle.stop();
});
lines.on('close', () => process.exit(0));
process.on('SIGTERM', () => {
  void manager.close().then(() => {
    console.log('closed');
    process.exit(0);
  });
});
console.log('ready');
