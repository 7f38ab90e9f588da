import { type Command, type Decider, notFound, quotaExceeded } from '@udp/eventsourcing';
import type { HistoryEvent, HistoryItemRecorded } from './aggregate';
import { HistoryEntries } from './history-entries';

/**
 * An entry of the state: its fields are declared once, in the event that records it (HistoryItemRecorded,
 * libs/contracts/src/events/history.ts), without the item id the state keys it by.
 */
export type Entry = Omit<HistoryItemRecorded['data'], 'itemId'>;

/** An item as the client sent it, with the date already resolved (server time when it sent none): no id yet. */
export type ItemToRecord = Omit<Entry, 'id' | 'deleted'> & { itemId: string; deleted?: boolean };

export type RecordItems = Command<'RecordItems', { items: ItemToRecord[] }>;
export type DeleteItem = Command<'DeleteItem', { itemId: string }>;
export type DeleteItemById = Command<'DeleteItemById', { id: number }>;
export type ClearHistory = Command<'ClearHistory', Record<string, never>>;
export type HistoryCommand = RecordItems | DeleteItem | DeleteItemById | ClearHistory;

export interface HistoryState {
  /** Read-only; a new state shares what did not change (history-entries.ts). */
  entries: HistoryEntries;
  lastId: number;
}

/** Per-user quota: entries of a history, tombstones included (HISTORY_MAX_ENTRIES). */
export interface HistoryQuotas {
  maxEntries: number;
}

/**
 * Adds or updates items. The newest write wins: an item older than the stored one changes nothing. New items
 * past the quota refuse the whole command (a batch is all or nothing); a tombstone keeps its place, because
 * syncing devices must learn of the deletion, so deleting does not make room (erasing the user's data does).
 */
function recordItems({ data }: RecordItems, state: HistoryState, quotas: HistoryQuotas): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  // Entries this command already changed, over the stored ones (no copy of a possibly long history).
  const changed = new Map<string, Entry>();
  let lastId = state.lastId;
  for (const item of data.items) {
    const stored = changed.get(item.itemId) ?? state.entries.get(item.itemId);
    if (stored && item.date < stored.date) continue;
    const entry: Entry = { id: stored?.id ?? ++lastId, date: item.date, deleted: item.deleted ?? false };
    // A field the client left out keeps its stored value (a date bump must not lose the position); absent, it has no key.
    const deviceId = item.deviceId ?? stored?.deviceId;
    if (deviceId !== undefined) entry.deviceId = deviceId;
    const position = item.lastPlaybackPosition ?? stored?.lastPlaybackPosition;
    if (position !== undefined) entry.lastPlaybackPosition = position;
    changed.set(item.itemId, entry);
    events.push({ type: 'HistoryItemRecorded', data: { itemId: item.itemId, ...entry } });
  }
  // Every new entry took the next id: their number is how far the sequence moved.
  const added = lastId - state.lastId;
  if (added > 0 && state.entries.size + added > quotas.maxEntries) {
    throw quotaExceeded(
      `a history holds at most ${quotas.maxEntries} entries, deleted ones included (HISTORY_MAX_ENTRIES); ` +
        `this one has ${state.entries.size} and this write adds ${added}`,
      'HISTORY_MAX_ENTRIES',
      quotas.maxEntries,
    );
  }
  return events;
}

function deleteItem({ data, metadata }: DeleteItem, state: HistoryState): HistoryEvent[] {
  const entry = state.entries.get(data.itemId);
  if (!entry) throw notFound(`no history item ${data.itemId}`);
  if (entry.deleted) return [];
  return [{ type: 'HistoryItemDeleted', data: { itemId: data.itemId, id: entry.id, date: metadata.now } }];
}

/**
 * A scan of the entries: deleting by id is rare, while an index by id in the state would double the copy every
 * write of a long history makes, and the snapshot's decoding.
 */
function deleteItemById({ data, metadata }: DeleteItemById, state: HistoryState): HistoryEvent[] {
  for (const [itemId, entry] of state.entries) {
    if (entry.id === data.id) return deleteItem({ type: 'DeleteItem', data: { itemId }, metadata }, state);
  }
  throw notFound(`no history item with id ${data.id}`);
}

/** Delete-all tombstones every live entry, so syncing devices learn of it with with_deleted=true. */
function clearHistory({ metadata }: ClearHistory, state: HistoryState): HistoryEvent[] {
  const itemIds = [...state.entries].filter(([, e]) => !e.deleted).map(([itemId]) => itemId);
  return itemIds.length ? [{ type: 'HistoryCleared', data: { date: metadata.now, itemIds } }] : [];
}

export const decide =
  (quotas: HistoryQuotas) =>
  (command: HistoryCommand, state: HistoryState): HistoryEvent[] => {
    switch (command.type) {
      case 'RecordItems':
        return recordItems(command, state, quotas);
      case 'DeleteItem':
        return deleteItem(command, state);
      case 'DeleteItemById':
        return deleteItemById(command, state);
      case 'ClearHistory':
        return clearHistory(command, state);
    }
  };

export function initialState(): HistoryState {
  return { entries: HistoryEntries.empty(), lastId: 0 };
}

/** The state after `events`: the entries they change over those of `from`, which is left as it was. */
export function fold(events: readonly HistoryEvent[], from: HistoryState): HistoryState {
  if (events.length === 0) return from;
  const changed = new Map<string, Entry>();
  const current = (itemId: string) => changed.get(itemId) ?? from.entries.get(itemId);
  let lastId = from.lastId;
  const tombstone = (itemId: string, date: number) => {
    const entry = current(itemId);
    if (entry) changed.set(itemId, { ...entry, deleted: true, date });
  };
  for (const event of events) {
    switch (event.type) {
      case 'HistoryItemRecorded': {
        const { itemId, ...entry } = event.data;
        changed.set(itemId, entry);
        lastId = Math.max(lastId, entry.id);
        break;
      }
      case 'HistoryItemDeleted':
        tombstone(event.data.itemId, event.data.date);
        break;
      case 'HistoryCleared':
        for (const itemId of event.data.itemIds) tombstone(itemId, event.data.date);
        break;
    }
  }
  return { entries: from.entries.with(changed), lastId };
}

export const evolve = (state: HistoryState, event: HistoryEvent): HistoryState => fold([event], state);

/** The history decider, given the per-user quota. */
export const historyDecider = (quotas: HistoryQuotas): Decider<HistoryCommand, HistoryEvent, HistoryState> => ({
  decide: decide(quotas),
  evolve,
  initialState,
  fold,
});
