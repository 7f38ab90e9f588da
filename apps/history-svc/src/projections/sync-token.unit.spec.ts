import { SYNC_TOKEN_PATTERN } from '@udp/contracts';
import type { RecordedEvent } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { historyStreamId } from '../domain/aggregate';
import { historyEntries, historyHeads, historyProjection } from './history';
import { formatSyncToken, parseSyncToken, positionAfter } from './sync-token';

describe('sync tokens', () => {
  it('round-trip a whole position and one inside a group, whatever the item id holds', () => {
    for (const position of [{ count: 0 }, { count: 41 }, positionAfter(7, 'urn:a'), positionAfter(3, 'a.b/ü 😀,=')]) {
      const token = formatSyncToken(position);
      expect(token).toMatch(SYNC_TOKEN_PATTERN);
      expect(parseSyncToken(token)).toEqual(position);
    }
  });
});

describe('history projection: change positions', () => {
  const recorded = (revision: number, type: string, data: Record<string, unknown>): RecordedEvent => ({
    id: `e${revision}`,
    streamId: historyStreamId('u'),
    revision,
    position: BigInt(revision),
    type,
    data,
    metadata: { owner: { userId: 'u' } },
    createdAt: 0,
  });

  it('moves each changed entry to the revision of its change, and the head after the entries', async () => {
    const readModels = new MemoryReadModelStore();
    const projection = historyProjection(readModels);
    await projection.apply(recorded(0, 'HistoryItemRecorded', { itemId: 'a', id: 1, date: 500, deleted: false }));
    await projection.apply(recorded(1, 'HistoryItemRecorded', { itemId: 'b', id: 2, date: 100, deleted: false }));
    await projection.apply(recorded(2, 'HistoryCleared', { date: 900, itemIds: ['a', 'b'] }));
    await projection.apply(recorded(1, 'HistoryItemRecorded', { itemId: 'b', id: 2, date: 100, deleted: false })); // a replay
    const entries = await historyEntries(readModels).find({ userId: 'u' }, { sort: { item_id: 1 } });
    expect(entries.map((e) => [e.item_id, e.revision, e.deleted])).toEqual([
      ['a', 2, true],
      ['b', 2, true],
    ]);
    expect(await historyHeads(readModels).get('u')).toEqual({ _id: 'u', userId: 'u', revision: 2, position: '2' });
  });
});
