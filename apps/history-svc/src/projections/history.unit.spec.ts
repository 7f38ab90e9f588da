import { ForeignEventError } from '@udp/eventsourcing';
import { MemoryReadModelStore } from '@udp/readmodel';
import { projectionSpecification, recordedEvents } from '@udp/test-system';
import { type HistoryEvent, historyStream } from '../domain/aggregate';
import { cleared, deleted, recorded } from '../testing/history-events';
import {
  HISTORY_COLLECTION,
  HISTORY_HEADS_COLLECTION,
  type HistoryEntryDocument,
  type HistoryHeadDocument,
  historyOwnRowsProjection,
  historyProjection,
} from './history';

/** history_entries: given events, the read-model documents; a replayed event changes nothing. */
const spec = projectionSpecification((readModels) => historyProjection(readModels));

/** The fields this spec is about (other fields a document may gain are checked by the replay specs). */
const entryOf = ({ _id, userId, item_id, id, date, deleted, device_id, last_playback_position, revision }: HistoryEntryDocument) => ({
  _id,
  userId,
  item_id,
  id,
  date,
  deleted,
  device_id,
  last_playback_position,
  revision,
});

const history: HistoryEvent[] = [
  recorded('urn:a', 1, 10, { deviceId: 'ios', lastPlaybackPosition: 12.5 }),
  recorded('urn:b', 2, 11),
  recorded('urn:c', 3, 12),
  recorded('urn:a', 1, 20, { deviceId: 'tv', lastPlaybackPosition: 30 }),
  deleted('urn:b', 2, 21),
  cleared(22, ['urn:c']),
  recorded('urn:d', 4, 23),
];

describe('history projection', () => {
  it('keeps one document per (user, item): the latest values, the deletion as a tombstone, the revision it reflects', () =>
    spec.given(historyStream('alice'), history).then(HISTORY_COLLECTION, (documents: HistoryEntryDocument[]) =>
      expect(documents.map(entryOf)).toEqual([
        {
          _id: 'alice/urn:a',
          userId: 'alice',
          item_id: 'urn:a',
          id: 1,
          date: 20,
          deleted: false,
          device_id: 'tv',
          last_playback_position: 30,
          revision: 3,
        },
        { _id: 'alice/urn:b', userId: 'alice', item_id: 'urn:b', id: 2, date: 21, deleted: true, revision: 4 },
        { _id: 'alice/urn:c', userId: 'alice', item_id: 'urn:c', id: 3, date: 22, deleted: true, revision: 5 },
        { _id: 'alice/urn:d', userId: 'alice', item_id: 'urn:d', id: 4, date: 23, deleted: false, revision: 6 },
      ]),
    ));

  it('stores no device or position the event does not carry', () =>
    spec.given(historyStream('alice'), [recorded('urn:a', 1, 10)]).then(HISTORY_COLLECTION, ([stored]) => {
      expect(stored).toMatchObject({ item_id: 'urn:a' });
      expect(stored).not.toHaveProperty('device_id');
      expect(stored).not.toHaveProperty('last_playback_position');
    }));

  it('a clear tombstones the items it names only; an item recorded again after it is live', () =>
    spec
      .given(historyStream('alice'), [recorded('urn:a', 1, 10), recorded('urn:b', 2, 11), cleared(20, ['urn:a']), recorded('urn:a', 1, 30)])
      .then(HISTORY_COLLECTION, (documents: HistoryEntryDocument[]) =>
        expect(documents.map((d) => [d.item_id, d.deleted, d.date, d.revision])).toEqual([
          ['urn:a', false, 30, 3],
          ['urn:b', false, 11, 1],
        ]),
      ));

  it('a deletion of an item it never saw writes nothing', () =>
    spec.given(historyStream('alice'), [deleted('urn:x', 7, 10)]).then(HISTORY_COLLECTION, []));

  it('is idempotent: replaying every event, or older ones after newer ones, changes nothing', () =>
    spec.given(historyStream('alice'), history).thenReplayingChangesNothing());

  it('keeps users apart, whatever their ids hold', () =>
    spec
      .given(historyStream('a/b'), [recorded('c', 1, 10)])
      .and(historyStream('a'), [recorded('b/c', 1, 11)])
      .then(HISTORY_COLLECTION, (documents: HistoryEntryDocument[]) =>
        expect(documents.map((d) => [d._id, d.userId, d.item_id, d.date])).toEqual([
          ['a%2Fb/c', 'a/b', 'c', 10],
          ['a/b/c', 'a', 'b/c', 11],
        ]),
      ));

  it("refuses an event of another owner in a user's stream and writes nothing of it", () =>
    spec.given({ id: historyStream('alice').id, owner: { userId: 'mallory' } }, [recorded('urn:x', 1, 10)]).thenRefuses(ForeignEventError));

  it('inline, a chunk of an append writes every entry and the head once, after them, at its last event', async () => {
    const readModels = new MemoryReadModelStore();
    const heads = readModels.collection<HistoryHeadDocument>(HISTORY_HEADS_COLLECTION);
    const headWrites: number[] = [];
    // The head follows its entries: every entry up to its revision is there when it is written.
    const written = async (doc: HistoryHeadDocument) => {
      const entries = await readModels.collection<HistoryEntryDocument>(HISTORY_COLLECTION).find({ userId: 'alice' });
      expect(Math.max(...entries.map((entry) => entry.revision))).toBe(doc.revision);
      headWrites.push(doc.revision);
    };
    // (The memory adapter's bulk write goes through its single one: counted once.)
    let inBulk = false;
    const upsert = heads.upsertIfNewer.bind(heads);
    heads.upsertIfNewer = async (doc) => {
      if (!inBulk) await written(doc);
      return upsert(doc);
    };
    const upsertMany = heads.upsertManyIfNewer.bind(heads);
    heads.upsertManyIfNewer = async (docs) => {
      for (const doc of docs) await written(doc);
      inBulk = true;
      try {
        return await upsertMany(docs);
      } finally {
        inBulk = false;
      }
    };
    const events = recordedEvents(
      historyStream('alice'),
      Array.from({ length: 40 }, (_, i) => recorded(`urn:${i}`, i + 1, 10 + i)),
    );
    const projection = historyOwnRowsProjection(readModels);
    await projection.applyBatch!(events.slice(0, 20));
    // A chunk with a clear: one event at a time, the head once.
    const withClear = recordedEvents(historyStream('alice'), [recorded('urn:x', 41, 90), cleared(91, ['urn:0', 'urn:x'])], 40, 100n);
    await projection.applyBatch!([...events.slice(20), ...withClear]);
    expect(headWrites).toEqual([19, 41]);
    expect(await heads.get('alice')).toMatchObject({ revision: 41, position: String(withClear[1].position) });
    const tombstones = await readModels.collection<HistoryEntryDocument>(HISTORY_COLLECTION).find({ userId: 'alice', deleted: true });
    expect(tombstones.map((entry) => entry.item_id).sort()).toEqual(['urn:0', 'urn:x']);
  });
});
