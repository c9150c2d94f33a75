import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { PostgresLockStore } from '../../../lib/stores/postgres/postgres-lock-store.js';
import { startPgBouncer, type PgBouncerHandle } from '../../support/pgbouncer-server.js';
import { freePort } from '../../support/redis-server.js';
import { startPostgresServer, type PostgresServerHandle } from '../../support/postgres-server.js';
import { uniquePrefix } from '../../support/stores.js';

describe('PostgresLockStore behind PgBouncer in transaction mode', () => {
  let server: PostgresServerHandle;
  let bouncer: PgBouncerHandle;
  const stores: PostgresLockStore[] = [];
  const managers: LockManager[] = [];
  const storeOf = (options: ConstructorParameters<typeof PostgresLockStore>[0]): PostgresLockStore => {
    const store = new PostgresLockStore(options);
    stores.push(store);
    return store;
  };
  const managerOf = (store: PostgresLockStore): LockManager => {
    const manager = new LockManager({ store, closeStore: false });
    managers.push(manager);
    return manager;
  };

  beforeAll(async () => {
    server = await startPostgresServer();
    bouncer = await startPgBouncer(server.port);
  }, 60_000);

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((manager) => manager.close()));
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });

  afterAll(async () => {
    await bouncer?.stop();
    await server?.destroy();
  });

  it('grants one holder at a time through the pooler, each lease one autocommit statement', async () => {
    const keyPrefix = uniquePrefix();
    const [a, b] = [0, 1].map(() =>
      managerOf(storeOf({ connectionString: bouncer.url, directUrl: server.url, keyPrefix })),
    );
    let inside = 0;
    let overlaps = 0;
    const fences: number[] = [];
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? a : b).using(
          'pooled',
          async (lock) => {
            if (++inside > 1) overlaps++;
            fences.push(lock.fence!);
            await sleep(5);
            inside--;
          },
          { wait: 10_000, fencing: true },
        ),
      ),
    );
    expect(overlaps).toBe(0);
    expect(fences).toEqual([...fences].sort((x, y) => x - y));
  });

  it('wakes a waiter in another process through the LISTEN connection of directUrl', async () => {
    const keyPrefix = uniquePrefix();
    const holder = storeOf({ connectionString: bouncer.url, directUrl: server.url, keyPrefix });
    const waiter = storeOf({ connectionString: bouncer.url, directUrl: server.url, keyPrefix });
    expect((await waiter.verify()).warnings).toEqual([]);
    const lock = await managerOf(holder).acquire('woken', { ttl: 10_000 });
    const started = performance.now();
    const waiting = managerOf(waiter).acquire('woken', { wait: 8000, retry: { minDelay: 5000, maxDelay: 5000 } });
    await sleep(200);
    await lock.release();
    await (await waiting).release();
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('warns at startup that LISTEN through the pooler hears nothing, and its waiters still get the lease by polling', async () => {
    const keyPrefix = uniquePrefix();
    const holder = storeOf({ connectionString: bouncer.url, keyPrefix });
    const waiter = storeOf({ connectionString: bouncer.url, keyPrefix });
    const { warnings } = await waiter.verify();
    expect(warnings).toEqual([expect.stringContaining('Set "directUrl" to PostgreSQL itself')]);
    expect(warnings.join()).toContain(`127.0.0.1:${bouncer.port}/postgres`);
    const lock = await managerOf(holder).acquire('polled', { ttl: 10_000 });
    const waiting = managerOf(waiter).acquire('polled', { wait: 8000, retry: { minDelay: 50, maxDelay: 200 } });
    await sleep(100);
    await lock.release();
    await (await waiting).release();
  });

  it('says when directUrl leads to the pooler too, and why a LISTEN connection could not open', async () => {
    const keyPrefix = uniquePrefix();
    const throughPooler = storeOf({ connectionString: bouncer.url, directUrl: bouncer.url, keyPrefix });
    expect((await throughPooler.verify()).warnings).toEqual([
      expect.stringContaining('"directUrl" leads to such a pooler too: point it at PostgreSQL itself'),
    ]);
    const nowhere = `postgres://app:S3cr3t@127.0.0.1:${await freePort()}/postgres`;
    const unreachable = storeOf({ connectionString: bouncer.url, directUrl: nowhere, keyPrefix });
    const { warnings } = await unreachable.verify();
    expect(warnings).toEqual([expect.stringContaining('(connection refused (ECONNREFUSED)): waiters poll')]);
    expect(warnings.join()).not.toContain('S3cr3t');
  });

  it('keeps, refuses a second keep of, reads and deletes response records through the pooler', async () => {
    const keyPrefix = uniquePrefix();
    const [one, two] = [0, 1].map(() => storeOf({ connectionString: bouncer.url, directUrl: server.url, keyPrefix }));
    const [records, others] = [one.capabilities.records!, two.capabilities.records!];
    const kept = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? others : records).put('r', `v${i}`, 60_000)),
    );
    expect(kept.filter(Boolean)).toHaveLength(1);
    expect(await others.get('r')).toBe(`v${kept.indexOf(true)}`);
    await records.delete('r');
    expect(await others.get('r')).toBeUndefined();
  });
});
