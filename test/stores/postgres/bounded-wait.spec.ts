import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { LEAST_ANSWER_TIME } from '../../../lib/core/waiting/answer-deadlines.js';
import { LockNotAcquiredError } from '../../../lib/errors/lock-not-acquired.error.js';
import { LockStoreError } from '../../../lib/errors/lock-store.error.js';
import { PostgresLockStore } from '../../../lib/stores/postgres/postgres-lock-store.js';
import { adminPool, startPostgresServer, type PostgresServerHandle } from '../../support/postgres-server.js';
import { uniquePrefix } from '../../support/stores.js';

/** The store's own statement timeout, which a blocked ask would otherwise wait out. */
const STATEMENT_TIMEOUT = 5000;
/**
 * Time a loaded machine may add to a deadline (the check runs every 50 ms, after the sockets are read; a starved
 * test process runs its timers late): bounded by the statement timeout, which a blocked ask waited out before.
 */
const SLACK = STATEMENT_TIMEOUT - 1500 - 500;

/**
 * A statement of the store can wait far longer than the acquisition that sent it: queued behind a row lock (here
 * another session's `SELECT ... FOR UPDATE` of the key's row) or for a pooled connection. The caller is answered
 * once its wait is over, and what the statement does after that is undone.
 */
describe('PostgresLockStore acquisitions whose statement is blocked', () => {
  let server: PostgresServerHandle;
  let admin: pg.Pool;
  let managers: LockManager[] = [];

  beforeAll(async () => {
    server = await startPostgresServer();
    admin = adminPool(pg, server.url, 2);
  }, 60_000);

  afterEach(async () => {
    await Promise.all(managers.map((manager) => manager.close()));
    managers = [];
  });

  afterAll(async () => {
    await admin?.end();
    await server?.destroy();
  });

  function manager(keyPrefix: string): LockManager {
    const made = new LockManager({ store: new PostgresLockStore({ connectionString: server.url, keyPrefix }) });
    managers.push(made);
    return made;
  }

  /** Holds the key's row locked from another session until the returned function is called. */
  async function blockRow(key: string): Promise<() => Promise<void>> {
    const blocker = await admin.connect();
    let rowCount: number | null = null;
    try {
      await blocker.query('BEGIN');
      ({ rowCount } = await blocker.query('SELECT 1 FROM public.nestjs_lock WHERE key = $1 FOR UPDATE', [key]));
    } finally {
      if (rowCount !== 1) blocker.release();
    }
    expect(rowCount).toBe(1);
    return async () => {
      await blocker.query('ROLLBACK');
      blocker.release();
    };
  }

  it('fails an ask that got no answer by the end of its wait as a store failure, and releases its late grant', async () => {
    const keyPrefix = uniquePrefix();
    const holder = manager(keyPrefix);
    const waiter = manager(keyPrefix);
    // the key's row exists, and its lease has ended by the time the blocked statement runs: that statement grants
    await holder.acquire('stock', { ttl: 200 });
    const unblock = await blockRow(`${keyPrefix}stock`);
    const started = performance.now();
    const failure = await waiter.acquire('stock', { ttl: 30_000, wait: 300 }).catch((error: unknown) => error);
    const took = performance.now() - started;
    try {
      expect(failure).toBeInstanceOf(LockStoreError);
      expect((failure as Error).message).toMatch(/no answer within \d+ ms \(the wait was 300 ms\)/);
      expect(took).toBeGreaterThanOrEqual(LEAST_ANSWER_TIME - 5);
      expect(took).toBeLessThan(LEAST_ANSWER_TIME + SLACK);
    } finally {
      await unblock();
    }
    // the statement now grants the key to the abandoned token, and the waiter releases that grant: the key is
    // free long before the 30 s lease would end
    const until = performance.now() + 8000;
    let taken = false;
    while (!taken && performance.now() < until) {
      taken = await holder.acquire('stock', { ttl: 1000 }).then(
        (lock) => lock.release().then(() => true),
        () => false,
      );
      if (!taken) await sleep(50);
    }
    expect(taken).toBe(true);
  }, 30_000);

  it('refuses at the end of its wait a waiter whose later ask is blocked', async () => {
    const keyPrefix = uniquePrefix();
    const holder = manager(keyPrefix);
    const waiter = manager(keyPrefix);
    const lock = await holder.acquire('stock', { ttl: 30_000 });
    const refused = new Promise((resolve) => waiter.on('contended', resolve));
    const started = performance.now();
    // the first ask is refused (the key is held), then every ask blocks until the end of the wait
    const failure = waiter
      .acquire('stock', { wait: 1500, retry: { minDelay: 20, maxDelay: 50 } })
      .catch((error: unknown) => error);
    await refused;
    const unblock = await blockRow(`${keyPrefix}stock`);
    try {
      const error = await failure;
      const took = performance.now() - started;
      expect(error).toBeInstanceOf(LockNotAcquiredError);
      expect(took).toBeGreaterThanOrEqual(1500 - 5);
      expect(took).toBeLessThan(1500 + SLACK);
    } finally {
      await unblock();
    }
    await lock.release();
  }, 30_000);
});
