import pg from 'pg';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { checkModuleOptions } from '../../lock.module-options.js';
import { createStore } from '../registry.js';
import { advisoryLockId } from './advisory-lock-id.js';
import { PostgresLockStore } from './postgres-lock-store.js';

/** The error a module configuration is refused with, or `undefined` when it is taken. */
function refusal(options: object): LockConfigurationError | undefined {
  try {
    checkModuleOptions(options);
    return undefined;
  } catch (error) {
    if (!(error instanceof LockConfigurationError)) throw error;
    return error;
  }
}

describe('LockModule options with postgres', () => {
  it('plans a PostgresLockStore from a URL with the module keyPrefix and handoffWindow, which the module owns', async () => {
    const checked = checkModuleOptions({
      postgres: 'postgres://app@127.0.0.1:1/app',
      keyPrefix: 'app:',
      handoffWindow: 50,
    });
    expect(checked.store).toEqual({
      kind: 'postgres',
      options: { connectionString: 'postgres://app@127.0.0.1:1/app', keyPrefix: 'app:', handoffWindow: 50 },
    });
    const created = await createStore(checked.store);
    expect(created.store).toBeInstanceOf(PostgresLockStore);
    expect(created.owned).toBe(true);
    await created.store.close();
  });

  it('takes a pg.Pool of the application as it is, and an object with a table and schema', () => {
    const pool = new pg.Pool({ connectionString: 'postgres://127.0.0.1:1/app' });
    expect(checkModuleOptions({ postgres: pool }).store).toEqual({ kind: 'postgres', options: { pool } });
    const options = { connectionString: 'postgres://127.0.0.1:1/app', table: 'app_locks', schema: 'locks' };
    expect(checkModuleOptions({ postgres: options }).store).toEqual({ kind: 'postgres', options });
  });

  it.each([
    ['redis beside it', { postgres: 'postgres://a/b', redis: 'redis://127.0.0.1:1' }, 'postgres'],
    ['replicaAck', { postgres: 'postgres://a/b', replicaAck: { replicas: 1, timeout: 50 } }, 'replicaAck'],
    ['releaseNotices', { postgres: 'postgres://a/b', releaseNotices: false }, 'releaseNotices'],
    ['its own keyPrefix', { postgres: { connectionString: 'postgres://a/b', keyPrefix: 'x:' } }, 'postgres.keyPrefix'],
    ['an unknown postgres option', { postgres: { connectionString: 'postgres://a/b', tabel: 'x' } }, 'postgres.tabel'],
    ['neither a URL nor a pool', { postgres: { table: 'locks' } }, 'postgres'],
    [
      'both a URL and a pool',
      { postgres: { connectionString: 'postgres://a/b', pool: new pg.Pool({ connectionString: 'postgres://a/b' }) } },
      'postgres.pool',
    ],
    ['a URL of another scheme', { postgres: 'mysql://a/b' }, 'postgres.connectionString'],
    [
      'a table name SQL would need to quote',
      { postgres: { connectionString: 'postgres://a/b', table: 'Locks;' } },
      'postgres.table',
    ],
    [
      'a createTable that is no boolean',
      { postgres: { connectionString: 'postgres://a/b', createTable: 'no' } },
      'postgres.createTable',
    ],
    ['an empty postgres option', { postgres: '' }, 'postgres'],
    ['a maxKeyLength past the index limit', { postgres: 'postgres://a/b', maxKeyLength: 1996 }, 'maxKeyLength'],
    [
      'a handoffWindow over half the ttl',
      { postgres: 'postgres://a/b', handoffWindow: 600, ttl: 1000 },
      'handoffWindow',
    ],
  ])('refuses %s, naming the option', (_label, options, option) => {
    expect(refusal(options)?.option).toBe(option);
  });

  it('takes the longest maxKeyLength whose keys fit the index with the prefix', () => {
    expect(refusal({ postgres: 'postgres://a/b', maxKeyLength: 1995 })).toBeUndefined();
    expect(refusal({ postgres: 'postgres://a/b', keyPrefix: 'app:', maxKeyLength: 1996 })).toBeUndefined();
    expect(refusal({ postgres: 'postgres://a/b', maxKeyLength: 1996 })?.message).toMatch(/at most 1995 here/);
  });

  it('suggests where an empty postgres option came from with the variable teams name its URL', () => {
    expect(refusal({ postgres: '' })?.message).toContain("postgres: config.get('DATABASE_URL')");
  });

  it('never shows the password of a URL it refuses', () => {
    const error = refusal({ postgres: { connectionString: 'postgres://app:S3cret@db/app x', table: 'locks' } });
    expect(error?.option).toBe('postgres.connectionString');
    expect(error?.message).not.toContain('S3cret');
  });
});

describe('PostgresLockStore.ddl()', () => {
  it('prints idempotent DDL of the four tables under the names given', () => {
    const ddl = PostgresLockStore.ddl({ table: 'app_locks', schema: 'locks' });
    const tables = ['app_locks', 'app_locks_waiters', 'app_locks_permits', 'app_locks_records'];
    for (const table of tables.map((name) => `"locks"."${name}"`)) {
      expect(ddl).toContain(`CREATE TABLE IF NOT EXISTS ${table}`);
    }
    expect(PostgresLockStore.ddl()).toContain('CREATE TABLE IF NOT EXISTS "public"."nestjs_lock" (');
  });
});

describe('advisoryLockId', () => {
  it('gives each key a stable signed 64-bit id, distinct across 100,000 keys', () => {
    expect(advisoryLockId('invoice:42')).toBe(advisoryLockId('invoice:42'));
    const ids = new Set(Array.from({ length: 100_000 }, (_, i) => advisoryLockId(`invoice:${i}`)));
    expect(ids.size).toBe(100_000);
    for (const id of [...ids].slice(0, 100)) {
      expect(BigInt(id)).toBeGreaterThanOrEqual(-(2n ** 63n));
      expect(BigInt(id)).toBeLessThan(2n ** 63n);
    }
  });
});
