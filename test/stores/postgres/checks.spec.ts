import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { LockStoreError } from '../../../lib/errors/lock-store.error.js';
import { checkLockStore } from '../../../lib/health/check-lock-store.js';
import { PostgresLockStore } from '../../../lib/stores/postgres/postgres-lock-store.js';
import { freePort } from '../../support/redis-server.js';
import { adminPool, startPostgresServer, type PostgresServerHandle } from '../../support/postgres-server.js';
import { uniquePrefix } from '../../support/stores.js';

describe('PostgresLockStore startup checks', () => {
  let server: PostgresServerHandle;
  let admin: pg.Pool;
  const stores: PostgresLockStore[] = [];
  const storeOf = (options: ConstructorParameters<typeof PostgresLockStore>[0]): PostgresLockStore => {
    const store = new PostgresLockStore(options);
    stores.push(store);
    return store;
  };
  const failure = (store: PostgresLockStore): Promise<unknown> =>
    store.verify().then(
      () => undefined,
      (error: unknown) => error,
    );

  beforeAll(async () => {
    server = await startPostgresServer();
    admin = adminPool(pg, server.url, 2);
  }, 60_000);

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });

  afterAll(async () => {
    await admin?.end();
    await server?.destroy();
  });

  it('names host:port/database and the cause of an unreachable server, never the password', async () => {
    const port = await freePort();
    const error = await failure(storeOf({ connectionString: `postgres://app:S3cr3t@127.0.0.1:${port}/orders` }));
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toBe(
      `Lock store failed to connect: PostgreSQL at 127.0.0.1:${port}/orders: connection refused (ECONNREFUSED)`,
    );
    expect(JSON.stringify(error) + String((error as Error).stack)).not.toContain('S3cr3t');
  });

  it('names the cause of a refused role in its own words, never the role, at startup and in a health check', async () => {
    const url = new URL(server.url);
    url.username = 'payroll-batch-7';
    const store = storeOf({ connectionString: url.href });
    const error = await failure(store);
    expect((error as Error).message).toContain(
      `: PostgreSQL at ${url.host}/postgres: the server refused this role (no such role, or pg_hba.conf) (SQLSTATE 28000)`,
    );
    expect((error as Error).message).not.toContain('payroll-batch-7');
    // nor in the cause, which a logger may print
    expect(String((error as Error).cause)).not.toContain('payroll-batch-7');
    const status = await checkLockStore(store);
    expect(status).toMatchObject({ healthy: false, reason: expect.stringContaining('SQLSTATE 28000') });
    expect(JSON.stringify(status)).not.toContain('payroll-batch-7');
  });

  it('says that the pool had no free connection when busy work holds all of them', async () => {
    const pool = new pg.Pool({ connectionString: server.url, max: 1, connectionTimeoutMillis: 300 });
    const store = storeOf({ pool, keyPrefix: uniquePrefix() });
    await store.verify();
    const busy = await pool.connect();
    try {
      const error = await store.acquire({ key: 'k', token: 'a'.repeat(32), ttl: 5000, fencing: false }).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(LockStoreError);
      expect((error as Error).message).toContain('no connection of the pool came free in time');
    } finally {
      busy.release();
      await store.close();
      await pool.end();
    }
  });

  it('names a key too long for the index by its cause, never quoting the key', async () => {
    const store = storeOf({ connectionString: server.url, keyPrefix: uniquePrefix() });
    await store.verify();
    // random bytes: a repeated character compresses under the index limit
    const key = `order:${randomBytes(1500).toString('hex')}`;
    const error = await store.acquire({ key, token: 'a'.repeat(32), ttl: 5000, fencing: false }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/key is too long .*maxKeyLength.*SQLSTATE 54000/);
    expect((error as Error).message).not.toContain(key.slice(6, 100));
  });

  it('creates the tables once when several instances boot at once', async () => {
    await admin.query('CREATE SCHEMA boot');
    const all = Array.from({ length: 6 }, () =>
      storeOf({ connectionString: server.url, schema: 'boot', keyPrefix: uniquePrefix() }),
    );
    await Promise.all(all.map((store) => store.verify()));
    const { rows } = await admin.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'boot'");
    expect(rows[0].n).toBe(4);
  });

  it('with createTable: false, refuses to start without the table and names the DDL to run', async () => {
    await admin.query('CREATE SCHEMA migrated');
    const store = storeOf({ connectionString: server.url, schema: 'migrated', createTable: false });
    const error = await failure(store);
    expect((error as Error).message).toContain('table migrated.nestjs_lock is missing');
    expect((error as Error).message).toContain('PostgresLockStore.ddl()');
    await admin.query(PostgresLockStore.ddl({ schema: 'migrated' }));
    await expect(store.verify()).resolves.toEqual({ warnings: [] });
  });

  it('warns at startup when the role commits without waiting for the WAL (synchronous_commit off)', async () => {
    await admin.query('CREATE ROLE lax LOGIN');
    await admin.query('ALTER ROLE lax SET synchronous_commit = off');
    await admin.query('CREATE SCHEMA lax AUTHORIZATION lax');
    const url = new URL(server.url);
    url.username = 'lax';
    const { warnings } = await storeOf({ connectionString: url.href, schema: 'lax' }).verify();
    expect(warnings).toEqual([expect.stringContaining('synchronous_commit is off, so a crash of the server can lose')]);
    // the role's setting is what the store's statements run with: on for the others
    await expect(storeOf({ connectionString: server.url, keyPrefix: uniquePrefix() }).verify()).resolves.toEqual({
      warnings: [],
    });
  });

  it('refuses a table of another shape, naming the column', async () => {
    await admin.query('CREATE SCHEMA reshaped');
    await admin.query(PostgresLockStore.ddl({ schema: 'reshaped' }));
    await admin.query('ALTER TABLE reshaped.nestjs_lock ALTER COLUMN fence TYPE integer');
    const error = await failure(storeOf({ connectionString: server.url, schema: 'reshaped' }));
    expect((error as Error).message).toContain('column "fence" is integer, expected bigint');
  });

  it('names the creation of the tables, not the connection, when the role may not create them', async () => {
    await admin.query('CREATE SCHEMA closed');
    await admin.query('CREATE ROLE visitor LOGIN');
    await admin.query('GRANT USAGE ON SCHEMA closed TO visitor');
    const url = server.url.replace('postgres@', 'visitor@');
    const error = await failure(storeOf({ connectionString: url, schema: 'closed' }));
    expect((error as Error).message).toMatch(
      /^Lock store failed to create its tables: PostgreSQL at .*: permission denied for schema closed$/,
    );
  });

  it('refuses a role that may read the tables but not write them', async () => {
    await admin.query('CREATE SCHEMA guarded');
    await admin.query(PostgresLockStore.ddl({ schema: 'guarded' }));
    await admin.query('CREATE ROLE reader LOGIN');
    await admin.query('GRANT USAGE ON SCHEMA guarded TO reader');
    await admin.query('GRANT SELECT ON ALL TABLES IN SCHEMA guarded TO reader');
    const url = server.url.replace('postgres@', 'reader@');
    const error = await failure(storeOf({ connectionString: url, schema: 'guarded', createTable: false }));
    expect((error as Error).message).toContain('may not read and write "guarded"."nestjs_lock"');
  });
});
