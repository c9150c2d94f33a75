import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { PostgresLockStore } from '../../../lib/stores/postgres/postgres-lock-store.js';
import { withPooledClient } from '../../../lib/stores/postgres/pooled-client.js';
import { END_TIMEOUT } from '../../../lib/stores/postgres/end-within.js';
import { startFaultProxy } from '../../support/fault-proxy.js';
import { adminPool, startPostgresServer, type PostgresServerHandle } from '../../support/postgres-server.js';
import { uniquePrefix } from '../../support/stores.js';

/**
 * The server ends connections of the store (a restart, `pg_terminate_backend`): the calls on them fail, the
 * process goes on. A connection taken out of the pool for several statements (permits, the tables' creation)
 * is ended outside any query too, which pg reports as an `error` event on that client.
 */
describe('PostgresLockStore when the server ends its connections', () => {
  let server: PostgresServerHandle;
  let admin: pg.Pool;

  beforeAll(async () => {
    server = await startPostgresServer();
    admin = adminPool(pg, server.url, 2);
  }, 60_000);

  afterAll(async () => {
    await admin?.end();
    await server?.destroy();
  });

  it('closes within its end timeout when the server no longer answers', async () => {
    const proxy = await startFaultProxy(server.url);
    try {
      const manager = new LockManager({
        store: new PostgresLockStore({ connectionString: proxy.url, keyPrefix: uniquePrefix() }),
      });
      // a wait opens the listener's connection too
      const held = await manager.acquire('report', { ttl: 5000 });
      await manager.acquire('report', { wait: 100 }).catch(() => undefined);
      await held.release();
      proxy.blackhole();
      const started = performance.now();
      await manager.close();
      // a place in a key's line left on the black-holed connection is answered by the 5 s statement timeout
      // before the store closes, then each of the two connections' ends takes at most END_TIMEOUT: without
      // the bound, close() never returned
      expect(performance.now() - started).toBeLessThan(5000 + 2 * END_TIMEOUT + 4000);
    } finally {
      await proxy.close();
    }
  }, 30_000);

  it('survives its pooled connection ended between two statements, and the pool drops that connection', async () => {
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    try {
      await withPooledClient(pool, async (client) => {
        const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
        await admin.query('SELECT pg_terminate_backend($1)', [(rows[0] as { pid: number }).pid]);
        // no query in flight: the server's goodbye arrives as an event of the client
        await sleep(300);
      });
      expect(pool.totalCount).toBe(0);
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
    }
  });

  it('keeps semaphore holders apart and its process alive while the server ends its connections', async () => {
    const keyPrefix = uniquePrefix();
    const managers = [0, 1].map(
      () =>
        new LockManager({
          store: new PostgresLockStore({ connectionString: server.url, keyPrefix }),
        }),
    );
    let inside = 0;
    let most = 0;
    let grants = 0;
    const until = performance.now() + 4000;
    const loops = managers.flatMap((manager) =>
      [0, 1, 2].map(async () => {
        while (performance.now() < until) {
          await manager
            .using(
              'pool:slots',
              async () => {
                most = Math.max(most, ++inside);
                grants++;
                await sleep(5);
                inside--;
              },
              { limit: 2, ttl: 2000, wait: 3000, retry: { minDelay: 10, maxDelay: 50 } },
            )
            .catch(() => undefined);
        }
      }),
    );
    // ends every connection of the store's pools again and again while the loops run
    const ending = (async () => {
      while (performance.now() < until) {
        await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' AND usename = current_user AND application_name = ''",
        );
        await sleep(150);
      }
    })();
    try {
      await Promise.all([...loops, ending]);
    } finally {
      await Promise.all(managers.map((manager) => manager.close()));
    }
    expect(grants).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(2);
  }, 30_000);
});
