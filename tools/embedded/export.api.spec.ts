import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { exportFlow } from './testing/export-flow';

// Embedded, as on `npm start`: drop any server the test run itself was given.
const { EVENTSTORE_URL: _es, MONGO_URL: _mongo, KAFKA_BROKERS: _kafka, ...embeddedEnv } = process.env;

exportFlow(
  'export flow, embedded (SQLite, memory read models, in-process bus, files)',
  embeddedEnv,
  async (dataDir) => readdirSync(join(dataDir, 'exports')).filter((n) => n.endsWith('.zip')).length,
);
