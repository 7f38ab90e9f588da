import { mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KafkaBus, type ReceivedMessage } from '@udp/bus';
import { SqliteEventStore } from '@udp/eventstore';
import { MongoReadModelStore } from '@udp/readmodel';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { reportSkipped, waitUntil } from '@udp/test-kit';
import { createHistoryService } from './app';
import { HISTORY_TOPIC } from './projections/history-changes';

/**
 * history-svc in its distributed wiring: read models in MongoDB (FerretDB in CI), changes published on Kafka,
 * driven over HTTP through the gateway. Runs where MONGO_URL and KAFKA_BROKERS are set (.ci/run sets both).
 */
const mongoUrl = process.env.MONGO_URL;
const brokers = process.env.KAFKA_BROKERS?.split(',');
jest.setTimeout(120_000);

if (!mongoUrl || !brokers) {
  reportSkipped(
    'history-svc distributed wiring',
    'MONGO_URL and KAFKA_BROKERS must both be set (bash tools/servers/with-servers.sh npm test)',
  );
} else {
  const dir = mkdtempSync(join(tmpdir(), 'udp-history-dist-'));
  const database = `udp_history_it_${randomUUID().slice(0, 8)}`;
  // The topic outlives a run on the same broker: a user of our own keeps this run's messages apart.
  const user = `ivy-${randomUUID().slice(0, 8)}`;
  let system: TestSystem;
  let consumerBus: KafkaBus;
  const messages: ReceivedMessage[] = [];

  const open = async () =>
    startTestSystem([
      {
        prefixes: ['/api/history'],
        create: (deps) => createHistoryService(deps),
        adapters: {
          store: new SqliteEventStore(join(dir, 'events.sqlite')),
          readModels: await MongoReadModelStore.connect(mongoUrl, database),
          bus: new KafkaBus(brokers, 'history-it'),
        },
      },
    ]);

  beforeAll(async () => {
    system = await open();
    consumerBus = new KafkaBus(brokers, 'history-it-consumer');
    await consumerBus.subscribe(HISTORY_TOPIC, `history-it-${randomUUID()}`, async (m) => void messages.push(m));
  });
  afterAll(async () => {
    await system?.stop();
    await consumerBus?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes, reads, pages and deletes through MongoDB read models', async () => {
    const auth = await system.auth(user);
    const data = Array.from({ length: 25 }, (_, i) => ({
      item_id: `urn:${String(i).padStart(2, '0')}`,
      date: 1000 + (i % 5),
      last_playback_position: i,
    }));
    expect((await system.http.post('/api/history/v2/batch').set('authorization', auth).send({ data })).status).toBe(204);
    const posted = await system.http.post('/api/history/v2').set('authorization', auth).send({ item_id: 'urn:new', date: 2000 });
    expect(posted.body).toMatchObject({ item_id: 'urn:new', id: 26 });

    const seen: string[] = [];
    let path = '/api/history/v2?limit=7';
    for (let page = 0; page < 10 && path; page++) {
      const res = await system.http.get(path).set('authorization', auth);
      seen.push(...res.body.data.map((i: { item_id: string }) => i.item_id));
      path = res.body.next ? `/api/history/v2${res.body.next}` : '';
    }
    const expected = [{ item_id: 'urn:new', date: 2000 }, ...data]
      .sort((a, b) => b.date - a.date || (a.item_id < b.item_id ? -1 : 1))
      .map((i) => i.item_id);
    expect(seen).toEqual(expected);

    expect((await system.http.delete('/api/history/v2/urn:03').set('authorization', auth)).status).toBe(204);
    const positions = await system.http
      .get('/api/history/v2/positions?item_ids=urn:03,urn:04&return_missing=true')
      .set('authorization', auth);
    expect(positions.body).toEqual({ 'urn:03': 3, 'urn:04': 4 });
    expect((await system.http.get('/api/history/v2/positions?item_ids=urn:03,urn:04').set('authorization', auth)).body).toEqual({
      'urn:04': 4,
    });
  });

  it('publishes every change on Kafka, keyed by user, in order', async () => {
    // 25 batch items, one POST, one DELETE: 27 events, revisions 0..26.
    const mine = () => messages.filter((m) => m.key === user);
    await waitUntil(() => mine().length >= 27, 60_000, 'history messages');
    expect(mine().map((m) => m.value.revision)).toEqual(Array.from({ length: 27 }, (_, i) => i));
    expect(mine()[0].value).toMatchObject({ userId: user, type: 'HistoryItemRecorded' });
    expect(mine()[26].value).toMatchObject({ type: 'HistoryItemDeleted' });
  });

  it('resumes from its Mongo checkpoint after a restart without applying anything twice', async () => {
    await system.stop();
    system = await open();
    const auth = await system.auth(user);
    const res = await system.http.get('/api/history/v2?limit=1000&with_deleted=true').set('authorization', auth);
    expect(res.body.total).toBe(26);
    expect(res.body.data.find((i: { item_id: string }) => i.item_id === 'urn:03')).toMatchObject({ deleted: true });
  });

  it('syncs with since through MongoDB: a write with an old date, then a delete-all paged in change order', async () => {
    const auth = await system.auth(user);
    const list = async (query: string) => (await system.http.get(`/api/history/v2${query}`).set('authorization', auth)).body;
    const head = await list('?limit=0');
    expect(head).toMatchObject({ data: [], sync_token: '27' });

    await system.http.post('/api/history/v2').set('authorization', auth).send({ item_id: 'urn:offline', date: 1 }).expect(200);
    const changed = await list(`?since=${head.sync_token}`);
    expect(changed.data.map((i: { item_id: string }) => i.item_id)).toEqual(['urn:offline']);
    expect((await list(`?after=${head.last_update}`)).data.map((i: { item_id: string }) => i.item_id)).not.toContain('urn:offline');

    await system.http.delete('/api/history/v2').set('authorization', auth).expect(204);
    const seen: string[] = [];
    let answer = await list(`?since=${changed.sync_token}&limit=5`);
    seen.push(...answer.data.map((i: { item_id: string; deleted: boolean }) => `${i.item_id}:${i.deleted}`));
    for (let page = 0; answer.next && page < 20; page++) {
      answer = await list(answer.next);
      seen.push(...answer.data.map((i: { item_id: string; deleted: boolean }) => `${i.item_id}:${i.deleted}`));
    }
    // 25 from the batch and urn:new, less urn:03 (deleted before), plus urn:offline: each once, as a tombstone.
    expect(seen).toHaveLength(26);
    expect(new Set(seen).size).toBe(26);
    expect(seen.every((s) => s.endsWith(':true'))).toBe(true);
    expect((await list(`?since=${answer.sync_token}`)).data).toEqual([]);
  });
}
