import pg from 'pg';
import { PostgresLockStore } from '../../../lib/stores/postgres/postgres-lock-store.js';
import { postgresTables } from '../../../lib/stores/postgres/postgres-tables.js';
import { startPostgresServer, type PostgresServerHandle } from '../../support/postgres-server.js';

describe('PostgresLockStore response records', () => {
  let server: PostgresServerHandle;
  let admin: pg.Pool;
  let store: PostgresLockStore;
  const { records: table } = postgresTables('public', 'nestjs_lock');
  const rows = async (where: string): Promise<number> =>
    (await admin.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`)).rows[0].n as number;

  beforeAll(async () => {
    server = await startPostgresServer();
    admin = new pg.Pool({ connectionString: server.url, max: 1 });
  }, 60_000);

  beforeEach(async () => {
    store = new PostgresLockStore({ connectionString: server.url, keyPrefix: 'shop:' });
    await store.verify();
  });

  afterEach(async () => {
    await store?.close();
    await admin.query(`DELETE FROM ${table}`);
  });

  afterAll(async () => {
    await admin?.end();
    await server?.destroy();
  });

  it('deletes expired records of other keys a few per keep, so the table holds about what is live', async () => {
    const records = store.capabilities.records!;
    // records whose ttl passed, as many keeps long ago would leave them
    await admin.query(
      `INSERT INTO ${table} (key, value, expires_at)
       SELECT 'old-' || n, 'v', clock_timestamp() - n * interval '1 second' FROM generate_series(1, 40) AS n`,
    );
    expect(await records.put('live-1', 'v', 60_000)).toBe(true);
    expect(await rows('expires_at <= clock_timestamp()')).toBe(24);
    // the oldest go first
    expect(await rows("key IN ('old-40', 'old-25')")).toBe(0);
    expect(await rows("key = 'old-24'")).toBe(1);
    await records.put('live-2', 'v', 60_000);
    await records.put('live-3', 'v', 60_000);
    expect(await rows('expires_at <= clock_timestamp()')).toBe(0);
    expect(await rows('true')).toBe(3);
  });

  it('stores the key as the caller gave it (a hash, from @Idempotent()) under the store prefix', async () => {
    await store.capabilities.records!.put('0f'.repeat(32), '{"v":1}', 60_000);
    const { rows: kept } = await admin.query(`SELECT key, value FROM ${table}`);
    expect(kept).toEqual([{ key: `shop:${'0f'.repeat(32)}`, value: '{"v":1}' }]);
  });
});
