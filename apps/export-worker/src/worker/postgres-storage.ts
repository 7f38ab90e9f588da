import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Pool } from 'pg';
import { SchemaOnce, inTransaction, postgresPool, unavailableAs } from '@udp/eventstore';
import { type ExportStorage, checked } from './storage';

/** Bytes per stored chunk: a row each, so a download holds one chunk in memory at a time. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * Distributed mode on PostgreSQL (READMODEL_URL=postgres://...): an object is its chunks (`export_chunks`, a row per
 * MiB, written as they come) and then its row in `export_files`, written last with the size; a download looks that row
 * up first, so a half-written object is never readable, and `remove` deletes both (a killed upload's chunks too).
 */
export class PostgresExportStorage implements ExportStorage {
  readonly kind = 'postgresql';
  private readonly pool: Pool;
  private readonly schema: SchemaOnce;
  private readonly files: string;
  private readonly chunks: string;

  constructor(url: string, schemaName: string) {
    if (!/^[a-z_][a-z0-9_]*$/.test(schemaName)) throw new Error(`schema ${schemaName}: lower-case letters, digits and _`);
    this.pool = postgresPool(url, { applicationName: 'udp-export-worker-storage', maxConnections: 4 });
    this.files = `"${schemaName}".export_files`;
    this.chunks = `"${schemaName}".export_chunks`;
    this.schema = new SchemaOnce('export storage', async () => {
      await inTransaction(this.pool, async (client) => {
        // One maker at a time across replicas (CREATE ... IF NOT EXISTS races on the catalogue otherwise).
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`udp-export-storage:${schemaName}`]);
        await client.query(`CREATE SCHEMA IF NOT EXISTS "${schemaName}"`);
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${this.chunks} (id text NOT NULL, n int NOT NULL, data bytea NOT NULL, PRIMARY KEY (id, n))`,
        );
        await client.query(`CREATE TABLE IF NOT EXISTS ${this.files} (id text PRIMARY KEY, size bigint NOT NULL)`);
      });
    });
  }

  newId(): string {
    return randomBytes(12).toString('hex');
  }

  async write(id: string, source: Readable): Promise<void> {
    checked(id);
    try {
      let n = 0;
      let size = 0;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        const data = Buffer.concat(pending, pendingBytes);
        await this.query(`INSERT INTO ${this.chunks} (id, n, data) VALUES ($1, $2, $3)`, [id, n++, data]);
        size += data.length;
        pending = [];
        pendingBytes = 0;
      };
      for await (const chunk of source) {
        const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        pending.push(bytes);
        pendingBytes += bytes.length;
        if (pendingBytes >= CHUNK_BYTES) await flush();
      }
      if (pendingBytes > 0) await flush();
      await this.query(`INSERT INTO ${this.files} (id, size) VALUES ($1, $2)`, [id, size]);
    } catch (error) {
      await this.remove(id).catch(() => undefined);
      throw error;
    }
  }

  async open(id: string): Promise<{ stream: Readable; size: number } | null> {
    const [file] = await this.query<{ size: string }>(`SELECT size FROM ${this.files} WHERE id = $1`, [checked(id)]);
    if (!file) return null;
    const next = async (n: number) =>
      (await this.query<{ data: Buffer }>(`SELECT data FROM ${this.chunks} WHERE id = $1 AND n = $2`, [id, n]))[0]?.data;
    const chunks = async function* () {
      for (let n = 0; ; n++) {
        const data = await next(n);
        if (!data) return;
        yield data;
      }
    };
    return { stream: Readable.from(chunks()), size: Number(file.size) };
  }

  async remove(id: string): Promise<void> {
    checked(id);
    await this.schema.ready();
    await inTransaction(this.pool, async (client) => {
      await client.query(`DELETE FROM ${this.files} WHERE id = $1`, [id]);
      await client.query(`DELETE FROM ${this.chunks} WHERE id = $1`, [id]);
    }).catch((error: unknown) => Promise.reject(unavailableAs('export storage', error)));
  }

  async list(): Promise<string[]> {
    return (await this.query<{ id: string }>(`SELECT id FROM ${this.files}`)).map((row) => row.id);
  }

  async close(): Promise<void> {
    await this.schema.settled();
    await this.pool.end();
  }

  private async query<R extends object>(text: string, values: unknown[] = []): Promise<R[]> {
    await this.schema.ready();
    try {
      return (await this.pool.query<R>(text, values)).rows;
    } catch (error) {
      throw unavailableAs('export storage', error);
    }
  }
}
