import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SEGMENTS_COLLECTION, type SegmentDocument, type SegmentsOptions } from '@udp/eventsourcing';
import type { CommonConfig } from '@udp/config';
import {
  EsdbEventStore,
  PostgresEventStore,
  SqliteEventStore,
  SqliteSnapshotStore,
  type EventStore,
  type SnapshotStore,
} from '@udp/eventstore';
import {
  MemoryReadModelStore,
  MongoReadModelStore,
  PostgresReadModelStore,
  SqliteReadModelStore,
  type ReadModelStore,
} from '@udp/readmodel';
import type { Logger } from '@udp/telemetry';
import { ReadModelSnapshotStore } from './snapshot-documents';
import { InProcessBus, KafkaBus, type Bus } from '@udp/bus';
import { InternalIdentity, fileSecret } from '@udp/auth';
import { TracedBus, tracedEventStore, tracedReadModels } from './traced-adapters';

/** The adapters a service runs on, chosen by the environment alone (docs/architecture.md, "Two run modes"). */
export interface Adapters {
  store: EventStore;
  readModels: ReadModelStore;
  /** Aggregate snapshots: a SQLite file beside the events when embedded, a read-model collection with a networked store. */
  snapshots: SnapshotStore;
  bus: Bus;
  identity: InternalIdentity;
  describe: { eventStore: string; readModels: string; bus: string };
  /** Distributed mode (read models in MongoDB or PostgreSQL, shared by the replicas): how they divide the projection work. */
  segments?: SegmentsOptions;
}

export async function openAdapters(config: CommonConfig, service: string, shared: { bus?: Bus } = {}, logger?: Logger): Promise<Adapters> {
  const dataDir = resolve(config.DATA_DIR);
  const sqlite = config.EVENTSTORE_URL ? null : new SqliteEventStore(join(dataDir, service, 'events.sqlite'), { service });
  // The embedded adapters get the CLIENT spans that library instrumentation gives the real ones (traced-adapters.ts).
  const store = sqlite ? tracedEventStore(sqlite, service) : networkedStore(config.EVENTSTORE_URL!, service, logger);
  // Read models on the SQLite log live in a SQLite file beside it, with their checkpoints, so a start replays only
  // the events after them (docs/architecture.md, "Embedded read models").
  const embedded = async () => {
    if (!sqlite) return new MemoryReadModelStore();
    const dir = join(dataDir, service);
    // The former saved copy of memory read models: of no use now, and it may hold data of users erased since.
    for (const legacy of ['read-models.ndjson', 'read-models.ndjson.tmp']) rmSync(join(dir, legacy), { force: true });
    return SqliteReadModelStore.open({
      file: join(dir, 'read-models.sqlite'),
      head: () => sqlite.highestPosition(),
      // The services start through startServiceProjections, which says when their projectors caught up.
      deferIndexes: true,
      logger: logger?.child({ component: 'read-models' }),
    });
  };
  const sharedStore = sharedReadModelsKind(config);
  const readModels =
    (await openSharedReadModels(config, service)) ?? tracedReadModels(await embedded(), service, sqlite ? 'sqlite' : 'memory');
  const snapshots = config.EVENTSTORE_URL
    ? new ReadModelSnapshotStore(readModels)
    : new SqliteSnapshotStore(join(dataDir, service, 'snapshots.sqlite'));
  const session = config.KAFKA_SESSION_TIMEOUT_MS;
  const bus = config.KAFKA_BROKERS
    ? new KafkaBus(
        config.KAFKA_BROKERS,
        service,
        session ? { sessionTimeoutMs: session, heartbeatIntervalMs: Math.floor(session / 6) } : {},
      )
    : new TracedBus(shared.bus ?? new InProcessBus());
  const segments: SegmentsOptions | undefined = sharedStore
    ? {
        count: config.PROJECTION_SEGMENTS,
        leaseMs: config.PROJECTION_LEASE_MS,
        owner: `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`,
        collection: readModels.collection<SegmentDocument>(SEGMENTS_COLLECTION),
        logger,
      }
    : undefined;
  return {
    store,
    readModels,
    snapshots,
    bus,
    segments,
    identity: new InternalIdentity(config.INTERNAL_AUTH_SECRET ?? fileSecret(dataDir, 'internal-identity')),
    describe: {
      eventStore: config.EVENTSTORE_URL ? (isPostgresUrl(config.EVENTSTORE_URL) ? 'postgresql' : 'kurrentdb') : 'sqlite',
      readModels: sharedStore ?? (config.EVENTSTORE_URL ? 'memory' : 'sqlite'),
      bus: config.KAFKA_BROKERS ? 'kafka' : 'in-process',
    },
  };
}

/** Which store holds the shared read models of the distributed mode: READMODEL_URL's, else MONGO_URL's; null embedded. */
export function sharedReadModelsKind(config: Pick<CommonConfig, 'READMODEL_URL' | 'MONGO_URL'>): 'postgresql' | 'mongodb' | null {
  const url = config.READMODEL_URL ?? config.MONGO_URL;
  return url === undefined ? null : isPostgresUrl(url) ? 'postgresql' : 'mongodb';
}

/**
 * The distributed mode's shared read models of one service (or the gateway): READMODEL_URL, else MONGO_URL; null
 * when neither is set. A service's collections are in a database (MongoDB) or a schema (PostgreSQL) of its own.
 */
export async function openSharedReadModels(
  config: Pick<CommonConfig, 'READMODEL_URL' | 'MONGO_URL' | 'MONGO_DB_PREFIX'>,
  service: string,
): Promise<ReadModelStore | null> {
  const url = config.READMODEL_URL ?? config.MONGO_URL;
  const namespace = `${config.MONGO_DB_PREFIX}_${service.replace(/-/g, '_')}`;
  switch (sharedReadModelsKind(config)) {
    case 'postgresql':
      // No library instrumentation for pg (libs/telemetry): its calls get the CLIENT spans the embedded stores get.
      return tracedReadModels(
        await PostgresReadModelStore.connect(url!.trim(), namespace, { applicationName: `udp-${service}-readmodels` }),
        service,
        'postgresql',
      );
    case 'mongodb':
      return MongoReadModelStore.connect(url!, namespace);
    case null:
      return null;
  }
}

export async function closeAdapters(adapters: Adapters, shared: { bus?: Bus } = {}): Promise<void> {
  await adapters.snapshots.close();
  await adapters.store.close();
  await adapters.readModels.close();
  const bus = adapters.bus instanceof TracedBus ? adapters.bus.inner : adapters.bus;
  if (bus !== shared.bus) await adapters.bus.close();
}

/** `postgres://` or `postgresql://` (libpq's two schemes): the PostgreSQL event store; any other URL is KurrentDB's. */
export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//i.test(url.trim());

/**
 * The event store of the distributed mode: PostgreSQL for a `postgres://` URL (each service's connections named after
 * it in `pg_stat_activity`), else KurrentDB (`kurrentdb://`, `esdb://`...), with each subscription failure that it
 * recovers from logged (the projection's lag shows what it costs).
 */
function networkedStore(url: string, service: string, logger: Logger | undefined): EventStore {
  if (isPostgresUrl(url)) {
    const store = new PostgresEventStore(url.trim(), { applicationName: `udp-${service}` });
    store.onListenerProblem = (error, attempt) =>
      logger?.warn({ err: error, attempt }, 'event store LISTEN connection lost; connecting again (subscriptions poll meanwhile)');
    return store;
  }
  const store = new EsdbEventStore(url);
  store.onSubscriptionProblem = (error, attempt) =>
    logger?.warn({ err: error, attempt }, 'event store subscription failed or ended; subscribing again from the last event handled');
  return store;
}
