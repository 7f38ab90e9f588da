import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KafkaBus, type Bus, type ReceivedMessage } from '@udp/bus';
import { erasureEvents } from '@udp/contracts';
import { SqliteEventStore } from '@udp/eventstore';
import { MongoReadModelStore, PostgresReadModelStore, type ReadModelStore } from '@udp/readmodel';
import { waitUntil } from '@udp/test-kit';
import { startTestSystem, type ServiceUnderTest, type TestSystem } from './system';

/**
 * Asks for the erasure of a user as the coordinator does, on the bus (`userdata.erasure.requested`), and
 * resolves with the confirmations once every service of the system confirmed (each service may have a bus of
 * its own in a test system: the request goes on each of them).
 */
export async function eraseUserOnBus(
  system: Pick<TestSystem, 'deps'>,
  userId: string,
  timeoutMs = 10_000,
): Promise<erasureEvents.ErasureConfirmedMessage[]> {
  const erasureId = randomUUID();
  const buses = [...new Set(system.deps.map((d) => d.bus))];
  const confirmations: erasureEvents.ErasureConfirmedMessage[] = [];
  const consumers = await Promise.all(
    buses.map((bus: Bus) =>
      bus.subscribe(erasureEvents.ERASURE_TOPICS.confirmed, `test-${erasureId}`, async (m: ReceivedMessage) => {
        const message = erasureEvents.ErasureConfirmedMessage.parse(m.value);
        if (message.erasureId === erasureId) confirmations.push(message);
      }),
    ),
  );
  const request: erasureEvents.ErasureRequestedMessage = { erasureId, userId, requestedAt: Date.now() };
  for (const bus of buses) await bus.publish(erasureEvents.ERASURE_TOPICS.requested, [{ key: userId, value: request }]);
  await waitUntil(() => confirmations.length >= system.deps.length, timeoutMs, 'a confirmation from every service');
  for (const consumer of consumers) await consumer.stop();
  return confirmations;
}

/** Which of `needles` occur in the raw bytes of any file under `dir` (SQLite databases, WALs, shared memory...). */
export function bytesFoundUnder(dir: string, needles: string[]): Array<{ file: string; needle: string }> {
  const found: Array<{ file: string; needle: string }> = [];
  const visit = (path: string) => {
    if (statSync(path).isDirectory()) return readdirSync(path).forEach((name) => visit(join(path, name)));
    const bytes = readFileSync(path);
    for (const needle of needles) if (bytes.includes(Buffer.from(needle, 'utf8'))) found.push({ file: path, needle });
  };
  visit(dir);
  return found;
}

/** Documents of any collection in a MongoDB database that mention one of `needles` anywhere (ids, values, keys). */
export async function mongoDocumentsMentioning(
  url: string,
  database: string,
  needles: string[],
): Promise<Array<{ collection: string; _id: unknown }>> {
  const { MongoClient } = require('mongodb') as typeof import('mongodb');
  const client = await new MongoClient(url, { serverSelectionTimeoutMS: 5000 }).connect();
  try {
    const db = client.db(database);
    const found: Array<{ collection: string; _id: unknown }> = [];
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
      for (const doc of await db.collection(name).find({}).toArray()) {
        const text = JSON.stringify(doc);
        if (needles.some((needle) => text.includes(needle))) found.push({ collection: name, _id: doc._id });
      }
    }
    return found;
  } finally {
    await client.close();
  }
}

/** Drops a test database. */
export async function dropMongoDatabase(url: string, database: string): Promise<void> {
  const { MongoClient } = require('mongodb') as typeof import('mongodb');
  const client = await new MongoClient(url, { serverSelectionTimeoutMS: 5000 }).connect();
  try {
    await client.db(database).dropDatabase();
  } finally {
    await client.close();
  }
}

/** Where a service under an erasure scenario keeps its read models and talks: memory and in-process by default. */
export interface ErasureBackends {
  readModels?: ReadModelStore;
  bus?: Bus;
  /** Documents left in the read-model store that mention one of `needles` (none after an erasure). */
  leftovers?(needles: string[]): Promise<unknown[]>;
  /** Removes what the backends created for the test (the test system closes the adapters themselves). */
  dispose?(): Promise<void>;
}

/** MongoDB read models in a database of their own (dropped by `dispose`) and the Kafka bus. */
export async function mongoKafkaBackends(service: string, mongoUrl: string, brokers: string[]): Promise<ErasureBackends> {
  const database = `udp_erasure_${service.replace(/-/g, '_')}_${randomUUID().slice(0, 8)}`;
  return {
    readModels: await MongoReadModelStore.connect(mongoUrl, database),
    bus: new KafkaBus(brokers, `${service}-erasure-it`),
    leftovers: (needles) => mongoDocumentsMentioning(mongoUrl, database, needles),
    dispose: () => dropMongoDatabase(mongoUrl, database),
  };
}

/**
 * PostgreSQL read models in a schema of their own (dropped by `dispose`) and the Kafka bus. The leftovers are the
 * documents of every collection as the store reads them (sealed ones opened with their owners' keys) that mention a
 * needle, and the owners' keys named by one (an erased user's is destroyed).
 */
export async function postgresKafkaBackends(service: string, postgresUrl: string, brokers: string[]): Promise<ErasureBackends> {
  const schema = `udp_erasure_${service.replace(/-/g, '_')}_${randomUUID().slice(0, 8)}`;
  const readModels = await PostgresReadModelStore.connect(postgresUrl, schema);
  const { Client } = require('pg') as typeof import('pg');
  const sql = async <R>(work: (client: import('pg').Client) => Promise<R>): Promise<R> => {
    const client = new Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  return {
    readModels,
    bus: new KafkaBus(brokers, `${service}-erasure-it`),
    leftovers: (needles) =>
      sql(async (client) => {
        const found: Array<{ collection: string; _id: unknown }> = [];
        const { rows: tables } = await client.query<{ name: string }>(
          'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1',
          [schema],
        );
        for (const { name } of tables.filter((table) => !table.name.startsWith('_')))
          for (const doc of await readModels.collection(name).find({}))
            if (needles.some((needle) => JSON.stringify(doc).includes(needle))) found.push({ collection: name, _id: doc._id });
        const { rows: owners } = await client.query<{ owner: string }>(
          `SELECT owner FROM "${schema}"."_owner_keys" WHERE owner = ANY($1)`,
          [needles],
        );
        for (const { owner } of owners) found.push({ collection: '_owner_keys', _id: owner });
        return found;
      }),
    dispose: () => sql(async (client) => void (await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))),
  };
}

/** A user id no other test uses, without dashes, so that a scan of raw bytes finds it if anything is left. */
export const distinctiveUserId = (prefix: string) => `${prefix}${randomUUID().replace(/-/g, '')}`;

/** Requests through the gateway as one user (bodies sent as JSON, so that bare numbers and strings go too). */
export interface UserClient {
  get(path: string): ReturnType<TestSystem['http']['get']>;
  post(path: string, body: unknown): ReturnType<TestSystem['http']['post']>;
  put(path: string, body: unknown): ReturnType<TestSystem['http']['put']>;
  delete(path: string): ReturnType<TestSystem['http']['delete']>;
}

export async function userClient(system: TestSystem, user: string): Promise<UserClient> {
  const auth = await system.auth(user);
  const json = (body: unknown) => JSON.stringify(body);
  return {
    get: (path) => system.http.get(path).set('authorization', auth),
    post: (path, body) => system.http.post(path).set('authorization', auth).set('content-type', 'application/json').send(json(body)),
    put: (path, body) => system.http.put(path).set('authorization', auth).set('content-type', 'application/json').send(json(body)),
    delete: (path) => system.http.delete(path).set('authorization', auth),
  };
}

/** What a service's erasure scenario works on; fresh for every test (see `erasureFixture`). */
export interface ErasureFixture {
  /** Where the service's SQLite event store lives: scanned for the erased user's bytes. */
  dataDir: string;
  system: TestSystem;
  backends: ErasureBackends;
  as(user: string): Promise<UserClient>;
}

/**
 * Before each test: a fresh data directory, the scenario's backends, and the service on a SQLite event store in that
 * directory behind the gateway; after each, all of it stopped and removed. `service` names the store's folder.
 */
export function erasureFixture(
  service: string,
  under: Omit<ServiceUnderTest, 'adapters'>,
  openBackends: () => Promise<ErasureBackends>,
): ErasureFixture {
  const fixture = { as: (user: string) => userClient(fixture.system, user) } as ErasureFixture;
  beforeEach(async () => {
    fixture.dataDir = mkdtempSync(join(tmpdir(), `udp-${service}-erasure-`));
    fixture.backends = await openBackends();
    const { readModels, bus } = fixture.backends;
    const store = new SqliteEventStore(join(fixture.dataDir, service, 'events.sqlite'));
    fixture.system = await startTestSystem([{ ...under, adapters: { store, readModels, bus } }]);
  });
  afterEach(async () => {
    await fixture.system.stop();
    await fixture.backends.dispose?.();
    rmSync(fixture.dataDir, { recursive: true, force: true });
  });
  return fixture;
}
