import { randomUUID } from 'node:crypto';
import type { MongoClient } from 'mongodb';
import { reportSkipped } from '@udp/test-kit';
import { storageContract } from './storage.contract';
import { GridFsExportStorage } from './storage';

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
