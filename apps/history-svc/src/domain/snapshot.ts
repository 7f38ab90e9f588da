import type { SnapshotCodec } from '@udp/eventsourcing';
import type { HistoryState } from './decider';
import { type EntryColumns, HistoryEntries } from './history-entries';

/** A snapshot this service did not write in this shape (a bug, or a hand-edited store): refused, never folded. */
class MalformedSnapshot extends Error {
  override readonly name = 'MalformedSnapshot';
}

/**
 * The entries as columns sorted by item id, one array per field, entry i at index i of each (`EntryColumns`). A long
 * history has tens of thousands of entries, and a write on it that finds no state in memory decodes its snapshot
 * first: JSON.parse of a few flat arrays allocates one array per field instead of one per entry, and the state keeps
 * the columns as they are, looked up by binary search (history-entries.ts): no map is built.
 * Checked field by field rather than by a zod schema, which cost several times the JSON parse.
 */
interface EncodedHistory extends EntryColumns {
  lastId: number;
}

const COLUMNS = ['itemIds', 'ids', 'dates', 'deleted', 'deviceIds', 'positions'] as const;

function encode(state: HistoryState): EncodedHistory {
  return { ...state.entries.toColumns(), lastId: state.lastId };
}

function decode(value: unknown): HistoryState {
  const encoded = value as Partial<EncodedHistory> | null;
  if (typeof encoded !== 'object' || encoded === null || typeof encoded.lastId !== 'number') {
    throw new MalformedSnapshot(`history snapshot: not { ${COLUMNS.join(', ')}, lastId }`);
  }
  const length = Array.isArray(encoded.itemIds) ? encoded.itemIds.length : -1;
  if (!COLUMNS.every((column) => Array.isArray(encoded[column]) && encoded[column].length === length)) {
    throw new MalformedSnapshot('history snapshot: columns missing or of different lengths');
  }
  const { itemIds, ids, dates, deleted, deviceIds, positions } = encoded as EncodedHistory;
  for (let i = 0; i < length; i++) {
    const itemId = itemIds[i];
    const deviceId = deviceIds[i];
    const position = positions[i];
    if (
      typeof itemId !== 'string' ||
      // Strictly ascending: the binary search finds every entry, and no item twice.
      (i > 0 && !(itemIds[i - 1] < itemId)) ||
      !Number.isSafeInteger(ids[i]) ||
      // New entries get the ids after `lastId`: an id above it would be given again.
      ids[i] > encoded.lastId ||
      typeof dates[i] !== 'number' ||
      (deleted[i] !== 0 && deleted[i] !== 1) ||
      (deviceId !== null && typeof deviceId !== 'string') ||
      (position !== null && typeof position !== 'number')
    ) {
      throw new MalformedSnapshot(`history snapshot: malformed entry ${i}`);
    }
  }
  return { entries: HistoryEntries.ofColumns({ itemIds, ids, dates, deleted, deviceIds, positions }), lastId: encoded.lastId };
}

/**
 * A user's folded history as a snapshot: the entries as columns (`EncodedHistory`). A snapshot of any other version
 * is ignored (the next write folds from the events and saves one of this version).
 */
export const historySnapshot: SnapshotCodec<HistoryState> = { version: 4, encode, decode };
