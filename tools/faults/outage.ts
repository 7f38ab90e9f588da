import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { reportSkipped, waitUntil } from '@udp/test-kit';
import {
  applyOnce,
  collectHistoryMessages,
  control,
  deployment,
  historyOf,
  type Instance,
  onPostgres,
  ownPostgresDatabase,
  range,
  serversMissing,
  startHistory,
  type Store,
  type Writers,
} from './support';

/** What a suite on the real servers works on: history-svc instances on one deployment, its users, and what Kafka delivered for them. */
export interface OnServers {
  settings: ReturnType<typeof deployment>;
  users: string[];
  /** Every instance of history-svc, started on the same stores; `service` is the first. */
  instances: Instance[];
  service: Instance;
  topic: Awaited<ReturnType<typeof collectHistoryMessages>>;
}

/**
 * The frame of a suite on the real servers: skipped (and said so) without them; otherwise `instances` history-svc
 * processes on one deployment, three users of the suite's own (`name` in their ids and the data folder) and a
 * collector of the topic; after the suite, `cleanUp` (whatever happened), then every process stopped.
 */
export function describeOnServers(
  title: string,
  name: string,
  options: {
    instances: number;
    users?: number;
    env?: (instance: number) => Record<string, string>;
    cleanUp?: () => Promise<void>;
    /** Where the events and read models are: the event store file and FerretDB (default), or PostgreSQL (POSTGRES_URL). */
    store?: Store;
    /**
     * On PostgreSQL: a database of the suite's own on POSTGRES_URL's server (made before the instances start, dropped
     * after), so that its event store holds this suite's events only; otherwise POSTGRES_URL's database itself, which
     * the suites before it wrote to.
     */
    ownDatabase?: boolean;
  },
  suite: (servers: OnServers) => void,
): void {
  jest.setTimeout(180_000);
  const missing = serversMissing(options.store);
  if (missing) return reportSkipped(`faults: ${title}`, missing);
  const dir = mkdtempSync(join(tmpdir(), `udp-faults-${name}-`));
  const servers = {
    settings: deployment(join(dir, 'data'), options.store),
    users: range(options.users ?? 3).map((i) => `${name}-${i}-${randomUUID().slice(0, 8)}`),
    instances: [],
  } as unknown as OnServers;
  let database: Awaited<ReturnType<typeof ownPostgresDatabase>> | undefined;
  beforeAll(async () => {
    if (options.store === 'postgres' && options.ownDatabase) {
      database = await ownPostgresDatabase(`faults_${name}_${randomUUID().slice(0, 8)}`);
      Object.assign(servers.settings, onPostgres(database.url));
    }
    for (let i = 0; i < options.instances; i++) servers.instances.push(await startHistory({ ...servers.settings, ...options.env?.(i) }));
    servers.service = servers.instances[0];
    servers.topic = await collectHistoryMessages(servers.users);
  });
  afterAll(async () => {
    await options.cleanUp?.();
    for (const instance of servers.instances) await instance.process.stop();
    await servers.topic?.stop();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  suite(servers);
}

/** What an outage suite works on: one history-svc on the real servers. */
export type Outage = OnServers;

/**
 * The frame of a suite that stops one server: one history-svc on the servers (its events and read models in `store`;
 * on PostgreSQL, a database of the suite's own), and the server's `script` run with 'start' after the suite, whatever
 * happened, so the next suite finds it up.
 */
export function describeOutage(
  title: string,
  name: string,
  script: () => string,
  suite: (outage: Outage) => void,
  store: Store = 'file',
): void {
  describeOnServers(title, name, { instances: 1, store, ownDatabase: true, cleanUp: () => control(script(), 'start') }, suite);
}

/**
 * Every acknowledged write, and nothing else, is in the read model; every change reaches Kafka, in order per user
 * (a repeated delivery carries the same event id). Resolves with the number of repeated deliveries.
 */
export async function expectNothingLost({ service, settings, users, topic }: Outage, writers: Writers): Promise<number> {
  for (const user of users) {
    const items = await historyOf(service, settings.INTERNAL_AUTH_SECRET, user);
    expect(items.map((i) => i.item_id).sort()).toEqual([...(writers.acknowledged.get(user) ?? [])].sort());
  }
  const published = (user: string) => applyOnce(topic.messages).revisions.get(user)?.length ?? 0;
  await waitUntil(() => users.every((u) => published(u) >= (writers.acknowledged.get(u)?.length ?? 0)), 90_000, 'every change on Kafka');
  const { revisions, repeats } = applyOnce(topic.messages);
  for (const user of users) expect(revisions.get(user)).toEqual(range(writers.acknowledged.get(user)!.length));
  return repeats;
}
