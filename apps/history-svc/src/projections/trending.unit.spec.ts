import { MemoryReadModelStore } from '@udp/readmodel';
import { type HistoryEntryDocument, historyEntries } from './history';
import { trendingItems } from './trending';

const DAY = 24 * 3600 * 1000;
const now = 100 * DAY;

async function entries(list: Array<[user: string, item: string, date: number, deleted?: boolean]>) {
  const collection = historyEntries(new MemoryReadModelStore());
  let revision = 0;
  for (const [userId, item_id, date, deleted] of list) {
    const doc: HistoryEntryDocument = {
      _id: `${userId}/${item_id}`,
      userId,
      item_id,
      id: 1,
      date,
      deleted: deleted ?? false,
      revision: revision++,
    };
    await collection.upsertIfNewer(doc);
  }
  return collection;
}

describe('trending', () => {
  it('lists only items watched by at least minUsers distinct users in the window, most users first', async () => {
    const collection = await entries([
      ['a', 'urn:hit', now - DAY],
      ['b', 'urn:hit', now - 2 * DAY],
      ['c', 'urn:hit', now - 3 * DAY],
      ['a', 'urn:two', now - DAY],
      ['b', 'urn:two', now - DAY],
      ['a', 'urn:alone', now - 1000],
      ['a', 'urn:old', now - 30 * DAY],
      ['b', 'urn:old', now - 30 * DAY],
      ['c', 'urn:old', now - 30 * DAY],
      ['a', 'urn:forgotten', now - DAY],
      ['b', 'urn:forgotten', now - DAY, true],
    ]);
    const items = await trendingItems(collection, { now, windowMs: 7 * DAY, minUsers: 2, limit: 10 });
    expect(items).toEqual([
      { item_id: 'urn:hit', users: 3, date: now - DAY },
      { item_id: 'urn:two', users: 2, date: now - DAY },
    ]);
    expect(await trendingItems(collection, { now, windowMs: 7 * DAY, minUsers: 3, limit: 10 })).toEqual([
      { item_id: 'urn:hit', users: 3, date: now - DAY },
    ]);
    expect(await trendingItems(collection, { now, windowMs: 7 * DAY, minUsers: 2, limit: 1 })).toHaveLength(1);
  });
});
