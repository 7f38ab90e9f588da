import { containersUnavailable, reportSkipped } from './environment';

/**
 * Declares a suite that needs MongoDB: MONGO_URL (CI: FerretDB on loopback) or a MongoDB testcontainer where Docker
 * runs; else the suite is reported as skipped, saying why. `define` gets the connection string once it is known.
 */
export function describeWithMongo(suite: string, define: (connection: () => string) => void): void {
  const url = process.env.MONGO_URL;
  const unavailable = url ? null : containersUnavailable();
  if (unavailable) {
    reportSkipped(suite, `MONGO_URL is unset and ${unavailable}`);
    return;
  }
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
  define(() => connection);
}
