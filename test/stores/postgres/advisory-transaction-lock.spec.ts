import pg from 'pg';
import { LockConfigurationError } from '../../../lib/errors/lock-configuration.error.js';
import { LockNotAcquiredError } from '../../../lib/errors/lock-not-acquired.error.js';
import { advisoryLockId, advisoryTransactionLock, type AdvisoryLockClient } from '../../../lib/postgres.js';
import { adminPool, startPostgresServer, type PostgresServerHandle } from '../../support/postgres-server.js';

describe('advisoryTransactionLock', () => {
  let server: PostgresServerHandle;
  let pool: pg.Pool;
  const taken: pg.PoolClient[] = [];
  const connection = async (): Promise<pg.PoolClient> => {
    const client = await pool.connect();
    taken.push(client);
    return client;
  };

  /** Holds the lock of `key` in a transaction of its own until `done` resolves; resolves once it holds it. */
  const holdUntil = async (key: string, done: Promise<void>): Promise<{ finished: Promise<void> }> => {
    const client = await connection();
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const finished = advisoryTransactionLock(client, key, async () => {
      held();
      await done;
    });
    await holding;
    return { finished };
  };

  beforeAll(async () => {
    server = await startPostgresServer();
    pool = adminPool(pg, server.url, 8);
    await pool.query('CREATE TABLE invoices (id text PRIMARY KEY, paid boolean NOT NULL DEFAULT false)');
  }, 60_000);

  afterEach(() => {
    for (const client of taken.splice(0)) client.release();
  });

  afterAll(async () => {
    await pool?.end();
    await server?.destroy();
  });

  it('gives a key the signed 64-bit id of its SHA-256, the one PostgreSQL shows in pg_locks while held', async () => {
    expect(advisoryLockId('invoice:42')).toBe('8754635089011177105');
    expect(advisoryLockId('invoice:43')).not.toBe(advisoryLockId('invoice:42'));
    let release!: () => void;
    const { finished } = await holdUntil('invoice:42', new Promise<void>((resolve) => (release = resolve)));
    // an advisory lock on one bigint shows its high 32 bits as classid and its low 32 bits as objid
    const { rows } = await pool.query<{ id: string }>(
      "SELECT ((classid::bigint << 32) | objid::bigint)::text AS id FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1",
    );
    release();
    await finished;
    expect(rows.map((row) => row.id)).toEqual([BigInt.asUintN(64, BigInt(advisoryLockId('invoice:42'))).toString()]);
  });

  it('refuses a second transaction at once with wait: false while the first holds the key, and grants it after COMMIT', async () => {
    let release!: () => void;
    const { finished } = await holdUntil('invoice:7', new Promise<void>((resolve) => (release = resolve)));
    const other = await connection();
    const refused = await advisoryTransactionLock(other, 'invoice:7', async () => 'ran', { wait: false }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(LockNotAcquiredError);
    release();
    await finished;
    await expect(advisoryTransactionLock(other, 'invoice:7', async () => 'ran', { wait: false })).resolves.toBe('ran');
  });

  it('waits at most the given ms for a held key, then fails with LockNotAcquiredError and leaves the connection usable', async () => {
    let release!: () => void;
    const { finished } = await holdUntil('invoice:8', new Promise<void>((resolve) => (release = resolve)));
    const other = await connection();
    const started = performance.now();
    const refused = await advisoryTransactionLock(other, 'invoice:8', async () => 'ran', { wait: 300 }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(LockNotAcquiredError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    release();
    await finished;
    await expect(other.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
    await expect(advisoryTransactionLock(other, 'invoice:8', async () => 'ran', { wait: 300 })).resolves.toBe('ran');
  });

  it("bounds the wait for the lock only: the callback's statements keep the transaction's lock_timeout", async () => {
    await pool.query("INSERT INTO invoices (id) VALUES ('12')");
    // another transaction holds the invoice's row for 600 ms
    const rowHolder = await connection();
    await rowHolder.query('BEGIN');
    await rowHolder.query("SELECT id FROM invoices WHERE id = '12' FOR UPDATE");
    const rowReleased = new Promise((resolve) => setTimeout(resolve, 600)).then(() => rowHolder.query('COMMIT'));
    const client = await connection();
    // without: the UPDATE failed with "canceling statement due to lock timeout" after 200 ms
    const outcome = await advisoryTransactionLock(
      client,
      'invoice:12',
      async () => {
        await client.query("UPDATE invoices SET paid = true WHERE id = '12'");
        return (await client.query<{ timeout: string }>("SELECT current_setting('lock_timeout') AS timeout")).rows;
      },
      { wait: 200 },
    );
    await rowReleased;
    expect(outcome).toEqual([{ timeout: '0' }]);
    await expect(pool.query("SELECT paid FROM invoices WHERE id = '12'")).resolves.toMatchObject({
      rows: [{ paid: true }],
    });
  });

  it("rolls back and rethrows the callback's own error untouched, and the key is free again", async () => {
    const client = await connection();
    const mine = new Error('payment declined');
    const thrown = await advisoryTransactionLock(client, 'invoice:9', async () => {
      await client.query("INSERT INTO invoices (id) VALUES ('9')");
      throw mine;
    }).catch((error: unknown) => error);
    expect(thrown).toBe(mine);
    await expect(pool.query("SELECT id FROM invoices WHERE id = '9'")).resolves.toMatchObject({ rows: [] });
    await expect(
      advisoryTransactionLock(await connection(), 'invoice:9', async () => 'ran', { wait: false }),
    ).resolves.toBe('ran');
  });

  it("runs on a client whose query resolves the rows themselves, as TypeORM's QueryRunner does", async () => {
    const client = await connection();
    const queryRunner: AdvisoryLockClient = {
      query: async (text, values) => (await client.query(text, values as unknown[])).rows,
    };
    await advisoryTransactionLock(
      queryRunner,
      'invoice:10',
      async () => void (await queryRunner.query("INSERT INTO invoices (id, paid) VALUES ('10', true)")),
      { wait: false },
    );
    await expect(pool.query("SELECT paid FROM invoices WHERE id = '10'")).resolves.toMatchObject({
      rows: [{ paid: true }],
    });
  });

  it('refuses a wait that is neither a boolean nor a whole number of ms before it begins a transaction', async () => {
    const client = await connection();
    for (const wait of [0, 1.5, '1s']) {
      await expect(
        advisoryTransactionLock(client, 'invoice:11', async () => 'ran', { wait: wait as number }),
      ).rejects.toBeInstanceOf(LockConfigurationError);
    }
    await expect(client.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
  });
});
