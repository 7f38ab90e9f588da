import { containersUnavailable, reportSkipped } from '@udp/test-kit';
import { MongoReadModelStore } from './mongo';
import { readModelContract } from './readmodel.contract';

/** MONGO_URL (CI: FerretDB on loopback) or a MongoDB testcontainer where Docker runs; else skipped, saying so. */
const url = process.env.MONGO_URL;

const unavailable = url ? null : containersUnavailable();

if (unavailable) {
  reportSkipped('ReadModelStore contract: mongodb', `MONGO_URL is unset and ${unavailable}`);
} else {
  let connection = url ?? '';
  let container: { stop(): Promise<unknown> } | null = null;
  beforeAll(async () => {
    if (url) return;
    const { MongoDBContainer } = await import('@testcontainers/mongodb');
    const started = await new MongoDBContainer('mongo:7.0.14').start();
    container = started;
    connection = `${started.getConnectionString()}?directConnection=true`;
  }, 180_000);
  afterAll(async () => {
    await container?.stop();
  });
  readModelContract('mongodb', () => MongoReadModelStore.connect(connection, 'udp_contract'));
}
