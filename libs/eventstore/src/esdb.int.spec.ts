import { containersUnavailable, reportSkipped } from '@udp/test-kit';
import { eventStoreContract } from './eventstore.contract';
import { EsdbEventStore } from './esdb';

/**
 * KurrentDB / EventStoreDB: EVENTSTORE_URL when set; else a testcontainer where Docker runs; else skipped,
 * saying so (no server can be had on machines without Docker: see README "Tests").
 */
const url = process.env.EVENTSTORE_URL;

const unavailable = url ? null : containersUnavailable();

if (unavailable) {
  reportSkipped('EventStore contract: kurrentdb', `EVENTSTORE_URL is unset and ${unavailable}`);
} else {
  let connection = url ?? '';
  let container: { stop(): Promise<unknown> } | null = null;
  beforeAll(async () => {
    if (url) return;
    const { KurrentDbContainer } = await import('@testcontainers/kurrentdb');
    const started = await new KurrentDbContainer('kurrentplatform/kurrentdb:25.0.1').start();
    container = started;
    connection = started.getConnectionString();
  }, 180_000);
  afterAll(async () => {
    await container?.stop();
  });
  eventStoreContract('kurrentdb', async () => new EsdbEventStore(connection));
}
