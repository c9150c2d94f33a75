import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { PostgresClientLike, PostgresPoolLike } from '../../interfaces/postgres-store-options.interface.js';

/** A `pg.Client` as the store uses it for its LISTEN connection. */
export interface PgListenClient extends PostgresClientLike {
  connect(): Promise<void>;
  end(): Promise<void>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): this;
  on(event: 'error' | 'end', listener: (error?: Error) => void): this;
  removeAllListeners(): this;
}

/** The constructors of node-postgres that the store uses. */
export interface PgModule {
  readonly Pool: new (config: object) => PostgresPoolLike & {
    on(event: 'error', listener: () => void): void;
    on(event: 'connect', listener: (client: { on(event: 'error', listener: () => void): void }) => void): void;
  };
  readonly Client: new (config: object) => PgListenClient;
}

/**
 * `pg` (node-postgres 8), loaded when a Postgres store is built and only then: it is an optional peer, so
 * an application on another store needs no `pg`.
 * @throws LockConfigurationError saying to install pg
 */
export async function loadPg(): Promise<PgModule> {
  try {
    const loaded = (await import('pg')) as unknown as { default?: PgModule } & PgModule;
    return loaded.default ?? loaded;
  } catch (error) {
    throw new LockConfigurationError(
      'postgres',
      undefined,
      `the Postgres store needs the package pg (node-postgres 8), which cannot be loaded (${error instanceof Error ? error.message : String(error)}): npm install pg`,
    );
  }
}
