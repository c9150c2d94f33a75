import { beginSql } from './begin.sql.js';

describe('beginSql', () => {
  it('bounds a lock wait by the deadline, and the idle time between round trips by at least 5 s', () => {
    expect(beginSql(150)).toBe(
      'BEGIN; SET LOCAL lock_timeout = 150; SET LOCAL idle_in_transaction_session_timeout = 5000',
    );
    expect(beginSql(20_000)).toBe(
      'BEGIN; SET LOCAL lock_timeout = 20000; SET LOCAL idle_in_transaction_session_timeout = 20000',
    );
  });

  it('keeps both within what PostgreSQL accepts for a timeout', () => {
    expect(beginSql(Number.MAX_SAFE_INTEGER)).toBe(
      'BEGIN; SET LOCAL lock_timeout = 2147483647; SET LOCAL idle_in_transaction_session_timeout = 2147483647',
    );
  });
});
