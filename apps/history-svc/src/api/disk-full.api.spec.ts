import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@udp/eventstore';
import { given } from '@udp/test-kit';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createHistoryService } from '../app';

/**
 * A full disk: every commit fails (SQLITE_FULL) while reads still answer, so /health/ must say which store cannot
 * write, and UP again once a write succeeds. history-svc on a real SQLite file that may not grow beyond a few pages
 * more than it holds (`PRAGMA max_page_count`: SQLite answers SQLITE_FULL exactly as on a full disk), through the
 * gateway. A padding stream, deleted at the end, stands for the files an operator removes to free space.
 */
let dir: string;
let store: SqliteEventStore;
let system: TestSystem;
let alice: string;

const padding = (i: number) => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  type: 'Padding',
  data: { x: 'p'.repeat(3000) },
});

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'udp-disk-full-'));
  const file = join(dir, 'events.sqlite');
  const seeding = new SqliteEventStore(file);
  await seeding.appendToStream(
    'padding',
    Array.from({ length: 40 }, (_, i) => padding(i)),
    { expectedRevision: 'no_stream' },
  );
  await seeding.close();
  const db = new Database(file);
  db.pragma('wal_checkpoint(TRUNCATE)');
  const pages = db.pragma('page_count', { simple: true }) as number;
  db.close();
  store = new SqliteEventStore(file, { maxPageCount: pages + 4 });
  system = await startTestSystem([{ prefixes: ['/api/history'], create: (deps) => createHistoryService(deps), adapters: { store } }]);
  alice = await system.auth('alice');
});
afterEach(async () => {
  await system.stop();
  rmSync(dir, { recursive: true, force: true });
});

const post = (i: number) =>
  system.http
    .post('/api/history/v2')
    .set('authorization', alice)
    .send({ item_id: `urn:item:${i}:${'x'.repeat(200)}`, device_id: 'd'.repeat(200) });

/** Writes until the file cannot grow: the first refused write's answer. */
async function fillTheDisk() {
  for (let i = 0; i < 500; i++) {
    const res = await post(i);
    if (res.status !== 200) return Object.assign(res, { refusedItem: `urn:item:${i}:` });
  }
  throw new Error('the store never filled up');
}

const health = () => system.http.get('/health/');
const nothing = () => undefined;

describe('when the disk is full', () => {
  it('refuses the write with 503, and /health/ says DOWN naming the event store of history-svc', async () => {
    await given(nothing)
      .when(fillTheDisk)
      .then((refused) => {
        expect(refused.status).toBe(503);
        expect(refused.body).toMatchObject({ status: 503, unavailable: 'event store' });
      });

    await given(nothing)
      .when(health)
      .then((res) => {
        expect(res.status).toBe(503);
        expect(res.body.detail).toContain('(event_store)');
        expect(res.body.services['/api/history']).toMatchObject({ status: 'DOWN', checks: { event_store: 'DOWN', read_models: 'UP' } });
      });
  });

  it('says UP again once writes succeed again (space freed)', async () => {
    await given(async () => {
      const { refusedItem } = await fillTheDisk();
      expect((await health()).status).toBe(503);
      await store.deleteStream('padding');
      return refusedItem;
    })
      .when(health)
      .then(async (res, refusedItem) => {
        expect(res.status).toBe(200);
        expect(res.text).toBe('UP');
        expect((await post(1000)).status).toBe(200);
        // The refused write left nothing behind.
        const list = await system.http.get('/api/history/v2?limit=1000&with_deleted=true').set('authorization', alice);
        const items = list.body.data.map((entry: { item_id: string }) => entry.item_id);
        expect(items.some((id: string) => id.startsWith(refusedItem))).toBe(false);
        expect(items.some((id: string) => id.startsWith('urn:item:1000:'))).toBe(true);
      });
  });
});
