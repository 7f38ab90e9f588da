import { MemoryReadModelStore } from '@udp/readmodel';
import { recordedEvents } from '@udp/test-system';
import { type HistoryEvent, historyStream } from '../domain/aggregate';
import { historyEntries, historyHeads, historyProjection, toItem } from './history';
import { historyJson, listHistory } from './history-queries';

const recorded = (
  itemId: string,
  id: number,
  date: number,
  extra: { deviceId?: string; lastPlaybackPosition?: number } = {},
): HistoryEvent => ({
  type: 'HistoryItemRecorded',
  data: { itemId, id, date, deleted: false, ...extra },
});

describe('a history page as JSON', () => {
  it('is byte for byte the History it stands for, before and after an entry changes', async () => {
    const readModels = new MemoryReadModelStore();
    const projection = historyProjection(readModels);
    const model = { entries: historyEntries(readModels), heads: historyHeads(readModels) };
    const events = recordedEvents(historyStream('alice'), [
      recorded('urn:a', 1, 10, { deviceId: 'tv' }),
      recorded('urn:b', 2, 20, { lastPlaybackPosition: 7 }),
      recorded('urn:c', 3, 20),
      recorded('urn:a', 1, 30, { deviceId: 'tv', lastPlaybackPosition: 3 }),
    ]);
    const same = async (limit: number) => {
      const page = await listHistory(model, 'alice', { limit });
      const { answers: _answers, version: _version, ...rest } = page;
      const entries = await model.entries.find({ userId: 'alice' }, { sort: { date: -1, item_id: 1 }, limit });
      expect(historyJson(page)).toBe(JSON.stringify({ data: entries.map(toItem), ...rest }));
      return JSON.parse(historyJson(page)) as { data: Array<{ item_id: string; date: number }>; next?: string };
    };
    for (const event of events.slice(0, 3)) await projection.apply(event);
    expect((await same(2)).next).toBeDefined();
    expect((await same(10)).data.map((i) => i.item_id)).toEqual(['urn:b', 'urn:c', 'urn:a']);
    // The entry's text was made before it changed: the changed entry is shown as it is now.
    await projection.apply(events[3]);
    expect((await same(10)).data[0]).toEqual({
      date: 30,
      deleted: false,
      device_id: 'tv',
      id: 1,
      item_id: 'urn:a',
      last_playback_position: 3,
    });
  });

  it("has a version that changes with every change of the user's entries, and none from another history", async () => {
    const readModels = new MemoryReadModelStore();
    const projection = historyProjection(readModels);
    const model = { entries: historyEntries(readModels), heads: historyHeads(readModels) };
    const version = async (user: string) => (await listHistory(model, user, { limit: 10 })).version;
    expect(await version('alice')).toBe('none');
    const alice = recordedEvents(historyStream('alice'), [recorded('urn:a', 1, 10), recorded('urn:b', 2, 20)]);
    const bob = recordedEvents(historyStream('bob'), [recorded('urn:a', 1, 10), recorded('urn:b', 2, 20)], 0, 100n);
    const seen = new Set([await version('alice')]);
    for (const event of alice) {
      await projection.apply(event);
      seen.add(await version('alice'));
    }
    for (const event of bob) await projection.apply(event);
    seen.add(await version('bob'));
    expect(seen.size).toBe(4);
  });
});
