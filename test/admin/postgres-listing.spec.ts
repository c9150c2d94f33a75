import pg from 'pg';
import { LockManager } from '../../lib/core/lock-manager.js';
import { PostgresLockStore } from '../../lib/stores/postgres/postgres-lock-store.js';
import { postgresTables } from '../../lib/stores/postgres/postgres-tables.js';
import { adminPool } from '../support/postgres-server.js';
import { postgresKind, uniquePrefix } from '../support/stores.js';
import { describeListingContract, expectOnSecondPage } from './lock-listing.contract.js';

describe('on a local PostgreSQL server', () => {
  beforeAll(() => postgresKind.server(), 60_000);
  afterAll(() => postgresKind.stop());

  describeListingContract(postgresKind);

  it('reads a bounded stretch of rows per page: 9000 free rows before a held key take several pages', async () => {
    const { url } = await postgresKind.server();
    const keyPrefix = uniquePrefix();
    const store = new PostgresLockStore({ connectionString: url, keyPrefix });
    const manager = new LockManager({ store });
    const admin = adminPool(pg, url, 1);
    try {
      await store.verify();
      // released fenced keys keep their rows (for their fences): what a busy table is mostly made of
      await admin.query(
        `INSERT INTO ${postgresTables('public', 'nestjs_lock').leases} (key, fence)
         SELECT $1 || 'a:' || lpad(n::text, 5, '0'), 1 FROM generate_series(1, 9000) AS n`,
        [keyPrefix],
      );
      const lock = await manager.acquire('b:held', { ttl: 30_000 });
      await expectOnSecondPage(store, 'b:held');
      await lock.release();
    } finally {
      await manager.close();
      await admin.end();
    }
  });
});
