import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Pool } from 'pg';
import {
  Coalesced,
  SchemaOnce,
  freshKey,
  inTransaction,
  postgresPool,
  scrubDeletedKeys,
  sealBytes,
  unavailableAs,
  unsealBytes,
} from '@udp/eventstore';
import { type ExportStorage, checked } from './storage';

/** Bytes per stored chunk: a row each, so a download holds one chunk in memory at a time. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * Distributed mode on PostgreSQL (READMODEL_URL=postgres://...): an object is its chunks (`export_chunks`, a row per
 * MiB, written as they come) and then its row in `export_files`, written last with the size; a download looks that row
 * up first, so a half-written object is never readable, and `remove` deletes both (a killed upload's chunks too).
 *
 * An export holds all of a user's data, and PostgreSQL keeps deleted rows in its pages and WAL: each object's chunks
 * are sealed (AES-256-GCM) with a key of its own, kept in its file row only, and `remove` scrubs the files table after
 * the deletion (`scrubDeletedKeys`, as the event store's keys: the table rewritten, the WAL that held the key removed),
 * so what stays of the chunks is unreadable. A killed upload's key was never stored.
 */
export class PostgresExportStorage implements ExportStorage {
  readonly kind = 'postgresql';
  private readonly pool: Pool;
  private readonly schema: SchemaOnce;
  private readonly files: string;
  private readonly chunks: string;
  /** The scrub after removals, shared by those that come together. */
  private readonly scrub: Coalesced;

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
        // The chunks' key (null: stored plain, before they were sealed).
        await client.query(`ALTER TABLE ${this.files} ADD COLUMN IF NOT EXISTS key bytea`);
      });
    });
    this.scrub = new Coalesced(() => scrubDeletedKeys(this.pool, this.files, (error) => unavailableAs('export storage', error)));
  }

  newId(): string {
    return randomBytes(12).toString('hex');
  }

  async write(id: string, source: Readable): Promise<void> {
    checked(id);
    const key = freshKey();
    try {
      let n = 0;
      let size = 0;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        const data = Buffer.concat(pending, pendingBytes);
        await this.query(`INSERT INTO ${this.chunks} (id, n, data) VALUES ($1, $2, $3)`, [id, n++, sealBytes(data, key)]);
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
      await this.query(`INSERT INTO ${this.files} (id, size, key) VALUES ($1, $2, $3)`, [
        id,
        size,
        Buffer.concat([keyIdBytes(key.id), key.key]),
      ]);
    } catch (error) {
      await this.remove(id).catch(() => undefined);
      throw error;
    }
  }

  async open(id: string): Promise<{ stream: Readable; size: number } | null> {
    const [file] = await this.query<{ size: string; key: Buffer | null }>(`SELECT size, key FROM ${this.files} WHERE id = $1`, [
      checked(id),
    ]);
    if (!file) return null;
    const key = file.key && { id: file.key.readBigUInt64BE(0), key: file.key.subarray(8) };
    const next = async (n: number) => {
      const data = (await this.query<{ data: Buffer }>(`SELECT data FROM ${this.chunks} WHERE id = $1 AND n = $2`, [id, n]))[0]?.data;
      return data && key ? unsealBytes(data, key) : data;
    };
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
    // Even when there was nothing to delete: a removal retried after its scrub failed must not end without one.
    await this.scrub.request();
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

/** A key's id as the 8 bytes that precede the key in its file row. */
function keyIdBytes(id: bigint): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(id);
  return bytes;
}
