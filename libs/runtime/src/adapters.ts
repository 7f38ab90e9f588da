import { join, resolve } from 'node:path';
import type { CommonConfig } from '@udp/config';
import { EsdbEventStore, SqliteEventStore, type EventStore } from '@udp/eventstore';
import { MemoryReadModelStore, MongoReadModelStore, type ReadModelStore } from '@udp/readmodel';
import { InProcessBus, KafkaBus, type Bus } from '@udp/bus';
import { InternalIdentity, fileSecret } from '@udp/auth';

/** The adapters a service runs on, chosen by the environment alone (DESIGN.md "Two ways to run"). */
export interface Adapters {
  store: EventStore;
  readModels: ReadModelStore;
  bus: Bus;
  identity: InternalIdentity;
  describe: { eventStore: string; readModels: string; bus: string };
}

export async function openAdapters(config: CommonConfig, service: string, shared: { bus?: Bus } = {}): Promise<Adapters> {
  const dataDir = resolve(config.DATA_DIR);
  const store = config.EVENTSTORE_URL ? new EsdbEventStore(config.EVENTSTORE_URL) : new SqliteEventStore(join(dataDir, service, 'events.sqlite'));
  const readModels = config.MONGO_URL
    ? await MongoReadModelStore.connect(config.MONGO_URL, `${config.MONGO_DB_PREFIX}_${service.replace(/-/g, '_')}`)
    : new MemoryReadModelStore();
  const bus = config.KAFKA_BROKERS ? new KafkaBus(config.KAFKA_BROKERS, service) : (shared.bus ?? new InProcessBus());
  return {
    store,
    readModels,
    bus,
    identity: new InternalIdentity(config.INTERNAL_AUTH_SECRET ?? fileSecret(dataDir, 'internal-identity')),
    describe: {
      eventStore: config.EVENTSTORE_URL ? 'kurrentdb' : 'sqlite',
      readModels: config.MONGO_URL ? 'mongodb' : 'memory',
      bus: config.KAFKA_BROKERS ? 'kafka' : 'in-process',
    },
  };
}

export async function closeAdapters(adapters: Adapters, shared: { bus?: Bus } = {}): Promise<void> {
  await adapters.store.close();
  await adapters.readModels.close();
  if (adapters.bus !== shared.bus) await adapters.bus.close();
}
