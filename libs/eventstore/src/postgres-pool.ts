import type { Pool, PoolClient, PoolConfig } from 'pg';
import { StoreUnavailableError } from './port';

// Required when a PostgreSQL store is made, not at import: the embedded mode need not load the driver.
const pg = () => require('pg') as typeof import('pg');

/** What a PostgreSQL store's pool is made with (the event store's and the read models'). */
export interface PostgresPoolOptions {
  /** Connections at most (default 8). */
  maxConnections?: number;
  /** How the connections are named in `pg_stat_activity`. */
  applicationName: string;
}

/** A pool of connections to `url`, which never keeps the process alive while idle and survives a server's restart. */
export function postgresPool(url: string, { maxConnections, applicationName }: PostgresPoolOptions): Pool {
  const config: PoolConfig = {
    connectionString: url,
    max: maxConnections ?? 8,
    connectionTimeoutMillis: 5000,
    keepAlive: true,
    application_name: applicationName,
    // Idle connections do not keep the process alive (a store nobody closed must not hold a test run open).
    allowExitOnIdle: true,
  };
  const pool = new (pg().Pool)(config);
  // An idle connection the server dropped (a restart): the pool forgets it and connects anew when asked.
  pool.on('error', () => undefined);
  return pool;
}

/** SQLSTATE classes of a server that cannot take the request now (connection, resources, shutdown, standby). */
const UNAVAILABLE_STATES = /^(08|53|57|58)|^25006$/;

/** The error's SQLSTATE: a server's answer has one (five characters); a socket's error an errno name or none. */
export const sqlStateOf = (error: unknown): string | null => {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : null;
};

/** `error` as StoreUnavailableError of `part` when the server could not be reached or cannot serve now (a 503, not a 500). */
export function unavailableAs(part: string, error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  const sqlState = sqlStateOf(error);
  if (sqlState !== null && !UNAVAILABLE_STATES.test(sqlState)) return error;
  return new StoreUnavailableError(part, (error as Error)?.message ?? String(error), { cause: error });
}

/**
 * A store's schema, made once: begun when the store is made, and begun again by the next use after it failed (the
 * server was down at open), which is told StoreUnavailableError of `part` meanwhile.
 */
export class SchemaOnce {
  private made: Promise<void>;

  constructor(
    private readonly part: string,
    private readonly make: () => Promise<void>,
  ) {
    this.made = this.begin();
  }

  /** Resolves once the schema is made; throws StoreUnavailableError (and begins again) when it could not be. */
  async ready(): Promise<void> {
    try {
      await this.made;
    } catch (error) {
      this.made = this.begin();
      throw unavailableAs(this.part, error);
    }
  }

  /** Settles when the attempt under way does, whatever its outcome (a store closing waits for it). */
  settled(): Promise<void> {
    return this.made.catch(() => undefined);
  }

  private begin(): Promise<void> {
    const made = this.make();
    // Seen by whoever uses the store first; not an unhandled rejection meanwhile.
    made.catch(() => undefined);
    return made;
  }
}

/** `work` on one connection of the pool, in one transaction: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // The server may end the connection between two statements (a restart): node-postgres then emits an error event,
  // which with no listener ends the process. The next statement fails instead, and the work with it.
  client.on('error', ignoreLostConnection);
  let failure: unknown = undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    failure = error;
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.removeListener('error', ignoreLostConnection);
    // A connection that failed may be broken: dropped, not given back to the pool.
    client.release(failure === undefined ? undefined : (failure as Error));
  }
}

const ignoreLostConnection = () => undefined;
