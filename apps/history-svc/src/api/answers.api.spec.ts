import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadModelStore } from '@udp/readmodel';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createHistoryService } from '../app';
import { type HistoryEntryDocument, historyEntries, historyHeads, toItem } from '../projections/history';

/**
 * Each entry keeps its answer text in its row and a page joins them. Read models written before (entries without
 * their answer) are not rebuilt: the service adds the answers once, at start, and answers the same bytes.
 */
let dir: string;
let system: TestSystem | undefined;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'history-answers-'))));
afterEach(async () => {
  await system?.stop();
  system = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const entry = (userId: string, itemId: string, id: number, date: number, revision: number, extra: Partial<HistoryEntryDocument> = {}) =>
  ({ _id: `${userId}:${itemId}`, userId, item_id: itemId, id, date, deleted: false, revision, ...extra }) as HistoryEntryDocument;

it('adds their answers at start to the entries of read models written before they kept one', async () => {
  const file = join(dir, 'read-models.sqlite');
  // As an earlier version left the file: entries and head, no answer in any row.
  const old = await SqliteReadModelStore.open({ file });
  const written = [
    entry('alice', 'urn:a', 1, 10, 0, { device_id: 'tv' }),
    entry('alice', 'urn:b', 2, 20, 1, { last_playback_position: 7 }),
    entry('alice', 'urn:c', 3, 30, 2, { deleted: true }),
  ];
  for (const doc of written) await historyEntries(old).upsertIfNewer(doc);
  await historyHeads(old).upsertIfNewer({ _id: 'alice', userId: 'alice', revision: 2, position: '3' });
  await old.close();

  const readModels = await SqliteReadModelStore.open({ file });
  system = await startTestSystem([{ prefixes: ['/api/history'], create: (deps) => createHistoryService(deps), adapters: { readModels } }]);
  const stored = await historyEntries(readModels).find({ userId: 'alice' }, { sort: { date: -1, item_id: 1 } });
  expect(stored.map((doc) => doc.answer)).toEqual([...written].reverse().map((doc) => JSON.stringify(toItem(doc))));

  const token = await system.auth('alice');
  const page = await system.http.get('/api/history/v2?with_deleted=true&limit=2').set('authorization', token);
  expect(page.text).toBe(
    JSON.stringify({
      data: [written[2], written[1]].map(toItem),
      last_update: 30,
      next: '?limit=2&with_deleted=true&before=20&before_item_id=urn%3Ab',
      sync_token: page.body.sync_token,
      total: 2,
    }),
  );
});
