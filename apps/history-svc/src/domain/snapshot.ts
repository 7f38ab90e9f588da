import type { SnapshotCodec } from '@udp/eventsourcing';
import type { Entry, HistoryState } from './decider';

/** A snapshot this service did not write in this shape (a bug, or a hand-edited store): refused, never folded. */
class MalformedSnapshot extends Error {
  override readonly name = 'MalformedSnapshot';
}

/**
 * The entries as columns, one array per field, entry i at index i of each. A long history has tens of thousands of
 * entries, and a write on it that finds no state in memory decodes its snapshot first: JSON.parse of a few flat
 * arrays allocates one array per field instead of one per entry, less than half the time (docs/performance.md,
 * "History snapshots").
 * Checked field by field rather than by a zod schema, which cost several times the JSON parse.
 */
interface EncodedHistory {
  itemIds: string[];
  ids: number[];
  dates: number[];
  /** 1 for a deleted entry, else 0. */
  deleted: (0 | 1)[];
  deviceIds: (string | null)[];
  positions: (number | null)[];
  lastId: number;
}

const COLUMNS = ['itemIds', 'ids', 'dates', 'deleted', 'deviceIds', 'positions'] as const;

function encode(state: HistoryState): EncodedHistory {
  const encoded: EncodedHistory = { itemIds: [], ids: [], dates: [], deleted: [], deviceIds: [], positions: [], lastId: state.lastId };
  for (const [itemId, entry] of state.entries) {
    encoded.itemIds.push(itemId);
    encoded.ids.push(entry.id);
    encoded.dates.push(entry.date);
    encoded.deleted.push(entry.deleted ? 1 : 0);
    encoded.deviceIds.push(entry.deviceId ?? null);
    encoded.positions.push(entry.lastPlaybackPosition ?? null);
  }
  return encoded;
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
  const entries = new Map<string, Entry>();
  for (let i = 0; i < length; i++) {
    const itemId = itemIds[i];
    const id = ids[i];
    const date = dates[i];
    const isDeleted = deleted[i];
    const deviceId = deviceIds[i];
    const position = positions[i];
    if (
      typeof itemId !== 'string' ||
      typeof id !== 'number' ||
      typeof date !== 'number' ||
      (isDeleted !== 0 && isDeleted !== 1) ||
      (deviceId !== null && typeof deviceId !== 'string') ||
      (position !== null && typeof position !== 'number')
    ) {
      throw new MalformedSnapshot(`history snapshot: malformed entry ${i}`);
    }
    const entry: Entry = { id, date, deleted: isDeleted === 1 };
    if (deviceId !== null) entry.deviceId = deviceId;
    if (position !== null) entry.lastPlaybackPosition = position;
    entries.set(itemId, entry);
  }
  return { entries, lastId: encoded.lastId };
}

/**
 * A user's folded history as a snapshot: the entries as columns (`EncodedHistory`). A snapshot of any other version
 * is ignored (the next write folds from the events and saves one of this version).
 */
export const historySnapshot: SnapshotCodec<HistoryState> = { version: 3, encode, decode };
