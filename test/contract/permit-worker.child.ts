// A permit holder in its own process, for permit-store.contract.ts. ROLE=sections: runs WORKERS workers of
// SECTIONS sections each on KEY (SHAPE: a limit, or readers-writer with WRITE_SHARE; MUTEX_SHARE of them mutex
// leases of the key), counting inside in Redis,
// and prints `done <report>`. ROLE=hold: takes COUNT permits of SHAPE for TTL ms, prints `held` and stays
// (the test kills it). It exits when the test process closes its stdin.
import { createInterface } from 'node:readline';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import { newToken } from '../../lib/utils/token.js';
import { clientOfSpace, type PermitSpace } from '../support/permit-stores.js';
import { runSections } from '../support/permit-sections.js';

const env = process.env as Record<string, string>;
const space = env as unknown as PermitSpace;
// the permits of a RedisLockStore, as the engine uses them; its mutex leases too when MUTEX_SHARE is set
const locks = new RedisLockStore({ client: clientOfSpace(space), keyPrefix: space.KEY_PREFIX, ownsClient: true });
const store = locks.capabilities.permits;
const counter = clientOfSpace(space);

createInterface({ input: process.stdin }).on('close', () => process.exit(0));

if (env.ROLE === 'hold') {
  const shape = JSON.parse(env.SHAPE) as { limit: number };
  for (let i = 0; i < Number(env.COUNT); i++) {
    const granted = await store.acquire({
      key: env.KEY,
      token: newToken(),
      ttl: Number(env.TTL),
      fencing: false,
      shape,
    });
    if (!granted.acquired) throw new Error(`permit ${i} refused: ${JSON.stringify(granted)}`);
  }
  console.log('held');
} else {
  console.log('ready');
  // all children start together, once the test says so
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  const report = await runSections({
    store,
    key: env.KEY,
    shape: JSON.parse(env.SHAPE) as { limit: number } | { readersWriter: true },
    writeShare: Number(env.WRITE_SHARE ?? 0),
    workers: Number(env.WORKERS),
    sectionsPerWorker: Number(env.SECTIONS),
    count: (name, by) => counter.incrby(`${space.KEY_PREFIX}count:${name}`, by),
    ...(env.MUTEX_SHARE ? { mutex: { store: locks, share: Number(env.MUTEX_SHARE) } } : {}),
  });
  await locks.close();
  await counter.quit();
  console.log(`done ${JSON.stringify(report)}`);
}
