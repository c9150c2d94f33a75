import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { LockStoreError } from '../../../lib/errors/lock-store.error.js';
import type { PermitRequest, PermitResult, PermitStore } from '../../../lib/interfaces/permit-store.interface.js';
import { PostgresLockStore } from '../../../lib/stores/postgres/postgres-lock-store.js';
import { startFaultProxy, type FaultProxy } from '../../support/fault-proxy.js';
import { adminPool, startPostgresServer, type PostgresServerHandle } from '../../support/postgres-server.js';
import { uniquePrefix } from '../../support/stores.js';
import { within } from '../../support/within.js';

/** The store's own statement timeout: the bound the server now puts on a stalled transaction too. */
const STATEMENT_TIMEOUT = 5000;
/**
 * How long the test gives the key to come free: the bound, then room for a loaded machine (a call that lost
 * the race with the server's bound fails as the store's error, and the next one is granted).
 */
const FREED_WITHIN = 4 * STATEMENT_TIMEOUT;

/**
 * A permit call is one transaction of two round trips that keeps the key's lease row locked between them. A
 * process frozen or cut off there (here: one connection partitioned right after its first round trip) must
 * not keep the key locked until TCP keepalive notices, two hours later: the server ends that transaction
 * within the store's bound, and other processes' calls on the key are answered.
 */
describe('PostgresLockStore when a permit transaction stalls between its round trips', () => {
  let server: PostgresServerHandle;
  let admin: pg.Pool;
  let proxy: FaultProxy | undefined;
  let stores: PostgresLockStore[] = [];
  let pools: pg.Pool[] = [];

  beforeAll(async () => {
    server = await startPostgresServer();
    admin = adminPool(pg, server.url, 2);
  }, 60_000);

  afterEach(async () => {
    // the partitioned connection first: its end lets the server end its backend
    await proxy?.close();
    proxy = undefined;
    await Promise.all(stores.map((store) => store.close()));
    stores = [];
    await Promise.all(pools.map((pool) => pool.end()));
    pools = [];
  });

  afterAll(async () => {
    await admin?.end();
    await server?.destroy();
  });

  /** How the stores reach the server: a pool they create (5 s query_timeout), or one of the application's. */
  type Pooling = 'own' | 'application';

  function permitsOn(url: string, keyPrefix: string, pooling: Pooling): PermitStore {
    let store: PostgresLockStore;
    if (pooling === 'own') store = new PostgresLockStore({ connectionString: url, keyPrefix });
    else {
      // no query_timeout: the client waits as long as the server lets it
      const pool = adminPool(pg, url, 4);
      pools.push(pool);
      store = new PostgresLockStore({ pool, keyPrefix });
    }
    stores.push(store);
    return store.capabilities.permits!;
  }

  /** The pid of the backend idle in a transaction whose last message names `storedKey`, once there is one. */
  async function idleInTransaction(storedKey: string): Promise<number> {
    for (const until = performance.now() + FREED_WITHIN; performance.now() < until; await sleep(50)) {
      const { rows } = await admin.query(
        "SELECT pid FROM pg_stat_activity WHERE state LIKE 'idle in transaction%' AND strpos(query, $1) > 0",
        [storedKey],
      );
      if (rows.length > 0) return (rows[0] as { pid: number }).pid;
    }
    throw new Error(`no backend idle in a transaction on ${storedKey}`);
  }

  /** What `pid` does on the server now, or `undefined` once it is gone. */
  async function backendState(pid: number): Promise<string | undefined> {
    const { rows } = await admin.query('SELECT state FROM pg_stat_activity WHERE pid = $1', [pid]);
    return (rows[0] as { state: string } | undefined)?.state;
  }

  /** Asks `request` again after each failure of the store until it is answered; the last failure after `ms`. */
  async function answered(permits: PermitStore, request: PermitRequest, ms: number): Promise<PermitResult> {
    const until = performance.now() + ms;
    for (;;) {
      try {
        return await permits.acquire(request);
      } catch (error) {
        if (!(error instanceof LockStoreError) || performance.now() > until) throw error;
      }
    }
  }

  it.each<[Pooling, RegExp]>([
    // the client's deadline and the server's bound are the same 5 s: either may answer the stalled call first
    ['own', /no answer in time|25P03|connection lost/],
    ['application', /left idle \(idle_in_transaction_session_timeout\) \(SQLSTATE 25P03\)|connection lost/],
  ])(
    'ends the stalled transaction within its bound, fails that call, and answers the next caller (%s pool)',
    async (pooling, failure) => {
      const keyPrefix = uniquePrefix();
      proxy = await startFaultProxy(server.url);
      const stalled = permitsOn(proxy.url, keyPrefix, pooling);
      const other = permitsOn(server.url, keyPrefix, pooling);
      const shape = { limit: 1 };
      // both stores create or check their tables first: that transaction sends a COMMIT too
      await Promise.all([stalled.inspect('slots'), other.inspect('slots')]);

      // the first round trip (BEGIN, the lock of the key's row, the read) reaches the server; the second
      // (the write and COMMIT) never does, as if the process froze between them
      const held = proxy.holdOn('COMMIT');
      const stalledCall = stalled.acquire({ key: 'slots', token: 'stalled', ttl: 60_000, shape, fencing: false }).then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
      await held;
      const pid = await idleInTransaction(`${keyPrefix}slots`);

      const started = performance.now();
      // a pool without query_timeout would wait without end for a row lock the server never gave back
      const next = await within(
        answered(other, { key: 'slots', token: 'next', ttl: 30_000, shape, fencing: false }, FREED_WITHIN),
        FREED_WITHIN + STATEMENT_TIMEOUT,
        'an answer to the next caller of the key',
      );
      // the stalled call wrote nothing: the one permit of the key is free for the next caller
      expect(next).toEqual({ acquired: true });
      expect(performance.now() - started).toBeLessThan(FREED_WITHIN + STATEMENT_TIMEOUT);

      // the server no longer keeps the stalled backend in its transaction (nor, soon, at all)
      for (const until = performance.now() + FREED_WITHIN; performance.now() < until; await sleep(50)) {
        if ((await backendState(pid)) === undefined) break;
      }
      expect(await backendState(pid)).toBeUndefined();

      // the stalled caller is told the store failed, never that it holds a permit
      const outcome = await within(stalledCall, FREED_WITHIN, 'the stalled call ending');
      expect(outcome).toEqual({ error: expect.any(LockStoreError) });
      expect(String((outcome as { error: Error }).error.message)).toMatch(failure);
      const state = await other.inspect('slots');
      expect(state.permits).toHaveLength(1);

      // and no backend is left waiting for the key's row lock after its caller gave up
      const { rows } = await admin.query(
        "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
      );
      expect(rows[0]).toEqual({ waiting: 0 });
    },
    90_000,
  );

  it("fails a permit call as the store's error once it waited its bound for the key's row lock", async () => {
    const keyPrefix = uniquePrefix();
    const permits = permitsOn(server.url, keyPrefix, 'application');
    await permits.inspect('slots');
    // another session inserts the key's lease row and keeps its transaction open: the permit's lock waits
    const blocker = await admin.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('INSERT INTO public.nestjs_lock (key) VALUES ($1)', [`${keyPrefix}slots`]);
      const started = performance.now();
      const error = await within(
        permits.acquire({ key: 'slots', token: 'blocked', ttl: 10_000, shape: { limit: 1 }, fencing: false }).then(
          () => undefined,
          (caught: unknown) => caught,
        ),
        FREED_WITHIN,
        'the blocked permit call failing',
      );
      expect(error).toBeInstanceOf(LockStoreError);
      expect((error as Error).message).toMatch(/lock timeout \(SQLSTATE 55P03\)/);
      expect(performance.now() - started).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT - 100);
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    await expect(
      permits.acquire({ key: 'slots', token: 'later', ttl: 10_000, shape: { limit: 1 }, fencing: false }),
    ).resolves.toEqual({ acquired: true });
  }, 60_000);
});
