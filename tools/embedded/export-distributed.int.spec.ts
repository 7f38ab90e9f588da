import { randomUUID } from 'node:crypto';
import { reportSkipped } from '@udp/test-kit';
import { exportFlow } from './testing/export-flow';

/**
 * The same export flow with every app on Kafka: on MongoDB-wire read models (FerretDB in CI) with the zips in GridFS
 * and the event stores SQLite (no KurrentDB runs here; its adapter has its own contract suite); and wholly on
 * PostgreSQL, event stores, read models and zips, in a database of the run's own.
 */
const mongoUrl = process.env.MONGO_URL;
const postgresUrl = process.env.POSTGRES_URL;
const brokers = process.env.KAFKA_BROKERS;
const { EVENTSTORE_URL: _es, READMODEL_URL: _rm, MONGO_URL: _mongo, ...base } = process.env;

if (!mongoUrl || !brokers) {
  reportSkipped('export flow, distributed', 'MONGO_URL and KAFKA_BROKERS must both be set (bash tools/servers/with-servers.sh npm test)');
} else {
  const prefix = `udp_export_e2e_${randomUUID().slice(0, 8)}`;
  exportFlow(
    'export flow, distributed (Kafka, FerretDB, GridFS)',
    { ...base, MONGO_URL: mongoUrl, MONGO_DB_PREFIX: prefix },
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

if (!postgresUrl || !brokers) {
  reportSkipped(
    'export flow, distributed on PostgreSQL',
    'POSTGRES_URL and KAFKA_BROKERS must both be set (bash tools/servers/with-servers.sh npm test)',
  );
} else {
  const { Client } = require('pg') as typeof import('pg');
  const database = `udp_export_e2e_${randomUUID().slice(0, 8)}`;
  const prefix = database;
  // Filled in before the flow starts the system (its beforeAll runs after this one).
  const env: NodeJS.ProcessEnv = { ...base, MONGO_DB_PREFIX: prefix };
  const withDatabase = () => Object.assign(new URL(postgresUrl), { pathname: `/${database}` }).href;
  const query = async (url: string, sql: string) => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  };
  beforeAll(async () => {
    await query(postgresUrl, `CREATE DATABASE ${database}`);
    env.EVENTSTORE_URL = withDatabase();
    env.READMODEL_URL = withDatabase();
  });
  exportFlow(
    'export flow, distributed on PostgreSQL (event stores, read models and zips; Kafka)',
    env,
    async () => Number((await query(withDatabase(), `SELECT count(*) AS n FROM "${prefix}_export_worker".export_files`))[0].n),
    120_000,
    150,
  );
}
