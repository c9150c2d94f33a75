import type { PostgresPoolLike } from '../../interfaces/postgres-store-options.interface.js';

/**
 * Why a grant this server acknowledged could be lost in a crash of the server alone: `synchronous_commit` off
 * answers a commit before its WAL is written, so a lease granted just before the crash is gone after the
 * restart while its holder runs; `undefined` when commits are kept.
 */
export async function commitDurability(pool: PostgresPoolLike): Promise<string | undefined> {
  // a warning only: a server without the setting (a PostgreSQL-compatible one) or a failed read says nothing
  const read = await pool.query("SELECT current_setting('synchronous_commit', true) AS setting").catch(() => undefined);
  if ((read?.rows[0] as { setting?: string } | undefined)?.setting !== 'off') return undefined;
  return (
    'synchronous_commit is off, so a crash of the server can lose the last grants it acknowledged (their ' +
    'holders run on while others are granted the same keys after the restart). Turn it on for the role of the ' +
    'locks (ALTER ROLE ... SET synchronous_commit = on).'
  );
}
