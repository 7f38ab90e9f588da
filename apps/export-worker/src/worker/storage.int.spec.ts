import { randomUUID } from 'node:crypto';
import type { MongoClient } from 'mongodb';
import { reportSkipped } from '@udp/test-kit';
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
