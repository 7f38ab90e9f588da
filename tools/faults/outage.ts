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
  range,
  serversMissing,
  startHistory,
  type Writers,
} from './support';

/** What an outage suite works on: one history-svc on the real servers, its users, and what Kafka delivered for them. */
export interface Outage {
  settings: ReturnType<typeof deployment>;
  users: string[];
  service: Instance;
  topic: Awaited<ReturnType<typeof collectHistoryMessages>>;
}

/**
 * The frame of a suite that stops one server: skipped (and said so) without the servers; otherwise history-svc with
 * three users of its own (`name` in their ids and the data folder) and a collector of its topic, and the server's
 * `script` run with 'start' after the suite, whatever happened, so the next suite finds it up.
 */
export function describeOutage(title: string, name: string, script: () => string, suite: (outage: Outage) => void): void {
  jest.setTimeout(180_000);
  const missing = serversMissing();
  if (missing) return reportSkipped(`faults: ${title}`, missing);
  const dir = mkdtempSync(join(tmpdir(), `udp-faults-${name}-`));
  const outage = {
    settings: deployment(join(dir, 'data')),
    users: range(3).map((i) => `${name}-${i}-${randomUUID().slice(0, 8)}`),
  } as Outage;
  beforeAll(async () => {
    outage.service = await startHistory(outage.settings);
    outage.topic = await collectHistoryMessages(outage.users);
  });
  afterAll(async () => {
    await control(script(), 'start');
    await outage.service?.process.stop();
    await outage.topic?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  suite(outage);
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
