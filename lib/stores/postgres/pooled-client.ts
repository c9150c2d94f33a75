import type { PostgresPoolClientLike, PostgresPoolLike } from '../../interfaces/postgres-store-options.interface.js';

/** The events of a `pg` `PoolClient`, as far as a client taken out of the pool needs them. */
interface ClientEvents {
  on?(event: 'error', listener: (error: Error) => void): unknown;
  off?(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Runs `work` on a connection taken out of `pool` and gives it back, as broken (the pool drops it) when `work`
 * failed or the server ended the connection meanwhile. A connection the server ends while it is out of the pool
 * (a restart, `pg_terminate_backend`) emits `error` on the client itself, which the pool stops listening to at
 * checkout: without a listener here that error would end the process, holders and all.
 */
export async function withPooledClient<T>(
  pool: PostgresPoolLike,
  work: (client: PostgresPoolClientLike) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  const events = client as PostgresPoolClientLike & ClientEvents;
  let broken: Error | undefined;
  const ended = (error: Error): void => {
    broken ??= error;
  };
  events.on?.('error', ended);
  try {
    return await work(client);
  } catch (error) {
    broken ??= error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    client.release(broken);
    // a broken connection keeps the listener: it is being closed, and may still report its end
    if (!broken) events.off?.('error', ended);
  }
}
