import { randomUUID } from 'node:crypto';
import { reportSkipped } from '@udp/test-kit';
import { exportFlow } from './testing/export-flow';

/**
 * The same export flow with every app on Kafka and MongoDB-wire read models (FerretDB in CI), zips in GridFS.
 * Event stores stay SQLite: no KurrentDB runs here (its adapter has its own contract suite).
 */
const mongoUrl = process.env.MONGO_URL;
const brokers = process.env.KAFKA_BROKERS;
if (!mongoUrl || !brokers) {
  reportSkipped('export flow, distributed', 'MONGO_URL and KAFKA_BROKERS must both be set (bash tools/servers/with-servers.sh npm test)');
} else {
  const prefix = `udp_export_e2e_${randomUUID().slice(0, 8)}`;
  const { EVENTSTORE_URL: _es, ...env } = process.env;
  exportFlow(
    'export flow, distributed (Kafka, FerretDB, GridFS)',
    { ...env, MONGO_DB_PREFIX: prefix },
    async () => {
      const { MongoClient } = require('mongodb') as typeof import('mongodb');
      const client = await MongoClient.connect(mongoUrl);
      try {
        return await client.db(`${prefix}_export_worker`).collection('exports.files').countDocuments();
      } finally {
        await client.close();
      }
    },
    120_000,
    150,
  ); // FerretDB projects a few dozen history events a second here: a smaller history
}
