import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { MongoClient } from 'mongodb';
import { filesHolding, postgresDataDirs, reportSkipped } from '@udp/test-kit';
import { storageContract } from './storage.contract';
import { GridFsExportStorage } from './storage';
import { PostgresExportStorage } from './postgres-storage';

/** GridFS on a real MongoDB-wire server (FerretDB in CI: tools/servers). */
const mongoUrl = process.env.MONGO_URL;
if (!mongoUrl) {
  reportSkipped('export storage contract: gridfs', 'MONGO_URL is unset (bash tools/servers/with-servers.sh npm test)');
} else {
  let client: MongoClient;
  const database = `udp_export_storage_it_${randomUUID().slice(0, 8)}`;
  storageContract(
    'gridfs',
    async () => {
      const { MongoClient } = require('mongodb') as typeof import('mongodb');
      client = await MongoClient.connect(mongoUrl);
      return new GridFsExportStorage(client.db(database));
    },
    async () => {
      const db = client.db(database);
      // Nothing left: no file documents and no chunks (a failed upload's chunks included).
      expect(await db.collection('exports.files').countDocuments()).toBe(0);
      expect(await db.collection('exports.chunks').countDocuments()).toBe(0);
      await db.dropDatabase();
      await client.close();
    },
  );
}

/** PostgreSQL (READMODEL_URL=postgres://...): the same contract on a real server (tools/servers). */
const postgresUrl = process.env.POSTGRES_URL;
if (!postgresUrl) {
  reportSkipped('export storage contract: postgresql', 'POSTGRES_URL is unset (bash tools/servers/with-servers.sh npm test)');
} else {
  let storage: PostgresExportStorage;
  const schema = `udp_export_storage_it_${randomUUID().slice(0, 8).replace(/-/g, '')}`;
  storageContract(
    'postgresql',
    async () => (storage = new PostgresExportStorage(postgresUrl, schema)),
    async () => {
      const { Client } = require('pg') as typeof import('pg');
      const client = new Client({ connectionString: postgresUrl });
      await client.connect();
      try {
        // Nothing left: no file rows and no chunks (a failed upload's chunks included).
        const count = async (table: string) => Number((await client.query(`SELECT count(*) AS n FROM "${schema}".${table}`)).rows[0].n);
        expect([await count('export_files'), await count('export_chunks')]).toEqual([0, 0]);
        await client.query(`DROP SCHEMA "${schema}" CASCADE`);
      } finally {
        await client.end();
        await storage.close();
      }
    },
  );
}

if (postgresUrl) {
  describe('PostgresExportStorage: sealed objects', () => {
    it('stores no byte of an export in plain, and after remove no file of the primary holds its key', async () => {
      // Given an export written with a marker in it
      const schema = `udp_export_sealed_it_${randomUUID().slice(0, 8).replace(/-/g, '')}`;
      const storage = new PostgresExportStorage(postgresUrl, schema);
      const { Client } = require('pg') as typeof import('pg');
      const client = new Client({ connectionString: postgresUrl });
      await client.connect();
      try {
        const marker = `EXPORT${randomUUID().replace(/-/g, '')}`;
        const id = storage.newId();
        await storage.write(id, Readable.from([Buffer.from(`${marker} `.repeat(50_000))]));
        // Then the chunks hold no plain byte of it, and a download gives it back whole
        const { rows } = await client.query(`SELECT data FROM "${schema}".export_chunks WHERE id = $1`, [id]);
        expect(rows.length).toBeGreaterThan(0);
        for (const row of rows) expect((row.data as Buffer).includes(Buffer.from(marker))).toBe(false);
        const opened = await storage.open(id);
        const read: Buffer[] = [];
        for await (const chunk of opened!.stream) read.push(chunk as Buffer);
        expect(Buffer.concat(read).toString()).toBe(`${marker} `.repeat(50_000));
        const key = (await client.query(`SELECT key FROM "${schema}".export_files WHERE id = $1`, [id])).rows[0].key as Buffer;
        await client.query('CHECKPOINT');
        const [primary] = postgresDataDirs();
        expect(filesHolding([primary], [key]).get('0')?.length ?? 0).toBeGreaterThan(0);
        // When it is removed
        await storage.remove(id);
        // Then its key is in no file of the primary (the table rewritten, the WAL that held it removed)
        expect(filesHolding([primary], [key]).get('0') ?? []).toEqual([]);
        expect(await storage.open(id)).toBeNull();
      } finally {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
        await storage.close();
      }
    });
  });
}
