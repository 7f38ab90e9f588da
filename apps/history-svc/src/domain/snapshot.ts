import type { SnapshotCodec } from '@udp/eventsourcing';
import type { HistoryState } from './decider';
import { HistoryEntries } from './history-entries';

/** A snapshot this service did not write in this shape (a bug, or a hand-edited store): refused, never folded. */
class MalformedSnapshot extends Error {
  override readonly name = 'MalformedSnapshot';
}

/**
 * The entries as columns sorted by item id, entry i at index i of each (`EntryColumns`): the item ids and device ids
 * as JSON arrays, the numbers as one block of binary doubles. A long history has tens of thousands of entries, and a
 * write on it that finds no state in memory decodes its snapshot first (the cold write): JSON.parse of three arrays
 * of numbers cost more than reading them from binary, and the state keeps the columns as they are, looked up by
 * binary search (history-entries.ts): no map is built.
 * Checked field by field rather than by a zod schema, which cost several times the JSON parse.
 */
interface EncodedHistory {
  itemIds: string[];
  deviceIds: (string | null)[];
  /** Base64 of the ids, then the dates, then the positions (NaN: none), `itemIds.length` of each, float64 little-endian. */
  numbers: string;
  /** Base64 of one byte per entry: 1 for a deleted one, else 0. */
  deleted: string;
  lastId: number;
}

const FIELDS = ['itemIds', 'deviceIds', 'numbers', 'deleted', 'lastId'] as const;

function encode(state: HistoryState): EncodedHistory {
  const { itemIds, ids, dates, deleted, deviceIds, positions } = state.entries.toColumns();
  const n = itemIds.length;
  const numbers = Buffer.alloc(24 * n);
  for (let i = 0; i < n; i++) {
    numbers.writeDoubleLE(ids[i], 8 * i);
    numbers.writeDoubleLE(dates[i], 8 * (n + i));
    numbers.writeDoubleLE(positions[i], 8 * (2 * n + i));
  }
  return {
    itemIds,
    deviceIds,
    numbers: numbers.toString('base64'),
    deleted: Buffer.from(Uint8Array.from(deleted)).toString('base64'),
    lastId: state.lastId,
  };
}

function decode(value: unknown): HistoryState {
  const encoded = value as Partial<EncodedHistory> | null;
  if (
    typeof encoded !== 'object' ||
    encoded === null ||
    typeof encoded.lastId !== 'number' ||
    !Array.isArray(encoded.itemIds) ||
    !Array.isArray(encoded.deviceIds) ||
    typeof encoded.numbers !== 'string' ||
    typeof encoded.deleted !== 'string'
  ) {
    throw new MalformedSnapshot(`history snapshot: not { ${FIELDS.join(', ')} }`);
  }
  const { itemIds, deviceIds } = encoded;
  const n = itemIds.length;
  const numbers = Buffer.from(encoded.numbers, 'base64');
  const deleted = Buffer.from(encoded.deleted, 'base64');
  if (deviceIds.length !== n || numbers.length !== 24 * n || deleted.length !== n) {
    throw new MalformedSnapshot('history snapshot: columns of different lengths');
  }
  const ids = new Float64Array(n);
  const dates = new Float64Array(n);
  const positions = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const itemId = itemIds[i];
    const deviceId = deviceIds[i];
    ids[i] = numbers.readDoubleLE(8 * i);
    dates[i] = numbers.readDoubleLE(8 * (n + i));
    positions[i] = numbers.readDoubleLE(8 * (2 * n + i));
    if (
      typeof itemId !== 'string' ||
      // Strictly ascending: the binary search finds every entry, and no item twice.
      (i > 0 && !(itemIds[i - 1] < itemId)) ||
      !Number.isSafeInteger(ids[i]) ||
      !Number.isFinite(dates[i]) ||
      (deleted[i] !== 0 && deleted[i] !== 1) ||
      (deviceId !== null && typeof deviceId !== 'string') ||
      (!Number.isNaN(positions[i]) && !Number.isFinite(positions[i]))
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
export const historySnapshot: SnapshotCodec<HistoryState> = { version: 5, encode, decode };
