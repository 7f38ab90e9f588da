import { DomainError } from '@udp/eventsourcing';
import { DeciderSpecification } from '@udp/test-kit';
import { type HistoryCommand, type HistoryState, type ItemToRecord, fold, historyDecider, evolve, initialState } from './decider';
import { HistoryEntries } from './history-entries';
import { historySnapshot } from './snapshot';
import type { HistoryEvent } from './aggregate';
import { cleared, deleted, recorded } from '../testing/history-events';

const spec = DeciderSpecification(historyDecider({ maxEntries: 1000 }));
const now = 1_700_000_100_000;
const at = (command: Omit<HistoryCommand, 'metadata'>) => ({ ...command, metadata: { now } }) as HistoryCommand;
/** The command that records items (one or a batch), as a client's write turns into it. */
const recordItems = (...items: ItemToRecord[]) => at({ type: 'RecordItems', data: { items } });
const notFound = (error: unknown) => error instanceof DomainError && error.kind === 'NotFound';
/** A state's content: its entries in item-id order, and its last id (how the entries are held does not count). */
const contentOf = (state: HistoryState) => ({ entries: [...state.entries].sort(([a], [b]) => (a < b ? -1 : 1)), lastId: state.lastId });

describe('history decider', () => {
  describe('when the history is at its quota of entries (HISTORY_MAX_ENTRIES)', () => {
    const full = DeciderSpecification(historyDecider({ maxEntries: 2 }));
    const quota = (error: unknown) =>
      error instanceof DomainError && error.kind === 'QuotaExceeded' && error.quota?.limit === 'HISTORY_MAX_ENTRIES';
    const past = [recorded('a', 1, 100), recorded('b', 2, 200), deleted('b', 2, 300)];

    it('refuses a new item, the whole batch with it (a tombstone keeps its place)', () => {
      full
        .given(past)
        .when(recordItems({ itemId: 'c', date: 400 }))
        .thenThrows(quota);
      full
        .given(past)
        .when(recordItems({ itemId: 'a', date: 400 }, { itemId: 'c', date: 400 }))
        .thenThrows(quota);
    });

    it('still updates an item, and records a deleted one again', () =>
      full
        .given(past)
        .when(recordItems({ itemId: 'a', date: 400 }, { itemId: 'b', date: 400 }))
        .then([recorded('a', 1, 400), recorded('b', 2, 400)]));
  });

  describe('when the history is empty', () => {
    it('records a new item with technical id 1', () =>
      spec
        .given([])
        .when(recordItems({ itemId: 'urn:a', date: 100, lastPlaybackPosition: 12.5, deviceId: 'ios' }))
        .then([recorded('urn:a', 1, 100, { lastPlaybackPosition: 12.5, deviceId: 'ios' })]));

    it('numbers a batch in order and keeps one entry per item (newest wins inside the batch too)', () =>
      spec
        .given([])
        .when(recordItems({ itemId: 'a', date: 10 }, { itemId: 'b', date: 20 }, { itemId: 'a', date: 30 }, { itemId: 'a', date: 5 }))
        .then([recorded('a', 1, 10), recorded('b', 2, 20), recorded('a', 1, 30)]));

    it('refuses to delete an unknown item', () =>
      spec
        .given([])
        .when(at({ type: 'DeleteItem', data: { itemId: 'nope' } }))
        .thenThrows(notFound));

    it('refuses to delete an unknown technical id', () =>
      spec
        .given([])
        .when(at({ type: 'DeleteItemById', data: { id: 7 } }))
        .thenThrows(notFound));

    it('clears nothing', () =>
      spec
        .given([])
        .when(at({ type: 'ClearHistory', data: {} }))
        .thenNothingHappens());
  });

  describe('when the item exists', () => {
    const past = [recorded('a', 1, 100, { lastPlaybackPosition: 30, deviceId: 'tv' }), recorded('b', 2, 200)];

    it('updates it when the new date is the same or newer, keeping its id', () =>
      spec
        .given(past)
        .when(recordItems({ itemId: 'a', date: 100, lastPlaybackPosition: 42 }))
        .then([recorded('a', 1, 100, { lastPlaybackPosition: 42, deviceId: 'tv' })]));

    it('ignores an update older than the stored entry (newest write wins)', () =>
      spec
        .given(past)
        .when(recordItems({ itemId: 'a', date: 99, lastPlaybackPosition: 1 }))
        .thenNothingHappens());

    it('keeps the stored position and device when the update leaves them out', () =>
      spec
        .given(past)
        .when(recordItems({ itemId: 'a', date: 150 }))
        .then([recorded('a', 1, 150, { lastPlaybackPosition: 30, deviceId: 'tv' })]));

    it('gives a new item the next id', () =>
      spec
        .given(past)
        .when(recordItems({ itemId: 'c', date: 300 }))
        .then([recorded('c', 3, 300)]));

    it('deletes it by business id with a tombstone dated now', () =>
      spec
        .given(past)
        .when(at({ type: 'DeleteItem', data: { itemId: 'a' } }))
        .then([deleted('a', 1, now)]));

    it('deletes it by technical id', () =>
      spec
        .given(past)
        .when(at({ type: 'DeleteItemById', data: { id: 2 } }))
        .then([deleted('b', 2, now)]));

    it('clears every live entry at once', () =>
      spec
        .given(past)
        .when(at({ type: 'ClearHistory', data: {} }))
        .then([cleared(now, ['a', 'b'])]));
  });

  describe('when the item is deleted', () => {
    const past: HistoryEvent[] = [recorded('a', 1, 100), deleted('a', 1, 500)];

    it('deleting it again changes nothing', () =>
      spec
        .given(past)
        .when(at({ type: 'DeleteItem', data: { itemId: 'a' } }))
        .thenNothingHappens());

    it('a write older than the tombstone does not bring it back', () =>
      spec
        .given(past)
        .when(recordItems({ itemId: 'a', date: 400 }))
        .thenNothingHappens());

    it('a newer write brings it back under the same id', () =>
      spec
        .given(past)
        .when(recordItems({ itemId: 'a', date: 600 }))
        .then([recorded('a', 1, 600)]));

    it('clear-all leaves it alone', () =>
      spec
        .given([...past, recorded('b', 2, 50)])
        .when(at({ type: 'ClearHistory', data: {} }))
        .then([cleared(now, ['b'])]));
  });

  it('fold agrees with evolve', () => {
    const events: HistoryEvent[] = [
      recorded('a', 1, 1),
      recorded('b', 2, 2),
      { type: 'HistoryItemDeleted', data: { itemId: 'a', id: 1, date: 3 } },
      { type: 'HistoryCleared', data: { date: 4, itemIds: ['b'] } },
      recorded('a', 1, 5),
    ];
    expect(fold(events, initialState())).toEqual(events.reduce(evolve, initialState()));
    expect(fold(events.slice(2), fold(events.slice(0, 2), initialState()))).toEqual(fold(events, initialState()));
  });

  it('a snapshot gives back the same state after a trip through JSON', () => {
    const state = fold(
      [recorded('a', 1, 1), recorded('b', 2, 2), { type: 'HistoryItemDeleted', data: { itemId: 'a', id: 1, date: 3 } }],
      initialState(),
    );
    expect(contentOf(historySnapshot.decode(JSON.parse(JSON.stringify(historySnapshot.encode(state)))))).toEqual(contentOf(state));
  });
});

describe('history snapshot decoding', () => {
  const columns = { itemIds: ['a'], ids: [1], dates: [1], deleted: [0], deviceIds: [null], positions: [null], lastId: 1 };

  it('reads the columns back as entries', () => {
    expect(contentOf(historySnapshot.decode({ ...columns, deviceIds: ['tv'], positions: [12.5] }))).toEqual({
      entries: [['a', { id: 1, date: 1, deleted: false, deviceId: 'tv', lastPlaybackPosition: 12.5 }]],
      lastId: 1,
    });
  });

  it.each([
    ['not an object', 'x'],
    ['a column missing', { itemIds: ['a'], ids: [1], dates: [1], deleted: [0], deviceIds: [null], lastId: 1 }],
    ['columns of different lengths', { ...columns, ids: [1, 2] }],
    ['an entry without its id', { ...columns, ids: [null] }],
    ['an id that is no integer', { ...columns, ids: [1.5] }],
    ['an id above the last one given (it would be given again)', { ...columns, ids: [2] }],
    ['a position that is not a number', { ...columns, positions: ['3'] }],
    ['a deleted flag that is not 0 or 1', { ...columns, deleted: [true] }],
    ['the version 2 shape', { entries: [['a', 1, 1, 0, null, null]], lastId: 1 }],
    [
      'item ids out of order (version 3 kept them in insertion order)',
      { ...columns, itemIds: ['b', 'a'], ids: [1, 2], dates: [1, 1], deleted: [0, 0], deviceIds: [null, null], positions: [null, null] },
    ],
    [
      'an item twice',
      { ...columns, itemIds: ['a', 'a'], ids: [1, 2], dates: [1, 1], deleted: [0, 0], deviceIds: [null, null], positions: [null, null] },
    ],
  ])('refuses %s', (_name, encoded) => {
    expect(() => historySnapshot.decode(encoded)).toThrow('history snapshot');
  });
});

describe('history entries (the state of a long history)', () => {
  const entry = (id: number) => ({ id, date: id, deleted: false });

  it('given entries from a snapshot, when a write changes some, then the new state has them and the old one is as it was', () => {
    const stored = HistoryEntries.ofColumns({
      itemIds: ['a', 'c'],
      ids: [1, 2],
      dates: [1, 2],
      deleted: [0, 0],
      deviceIds: ['tv', null],
      positions: [null, 7],
    });
    const next = stored.with([
      ['c', { id: 2, date: 9, deleted: true }],
      ['b', entry(3)],
    ]);
    expect([...stored]).toEqual([
      ['a', { id: 1, date: 1, deleted: false, deviceId: 'tv' }],
      ['c', { id: 2, date: 2, deleted: false, lastPlaybackPosition: 7 }],
    ]);
    expect([...next]).toEqual([
      ['a', { id: 1, date: 1, deleted: false, deviceId: 'tv' }],
      ['c', { id: 2, date: 9, deleted: true }],
      ['b', entry(3)],
    ]);
    expect([stored.size, next.size, next.has('b'), next.has('z'), next.get('z')]).toEqual([2, 3, true, false, undefined]);
    expect(next.toColumns().itemIds).toEqual(['a', 'b', 'c']);
  });

  it('given many writes, then the changes are merged into new columns and nothing is lost or counted twice', () => {
    let entries = HistoryEntries.empty();
    for (let i = 0; i < 3000; i++) entries = entries.with([[`item${i % 2500}`, entry(i)]]);
    expect(entries.size).toBe(2500);
    expect(entries.get('item7')).toEqual(entry(2507));
    expect(entries.get('item2499')).toEqual(entry(2499));
    expect(new Set([...entries.keys()]).size).toBe(2500);
  });
});
