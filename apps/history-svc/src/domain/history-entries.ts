import type { Entry } from './decider';

/** A history's entries as columns, entry i at index i of each, sorted by item id (a snapshot's shape). */
export interface EntryColumns {
  itemIds: string[];
  ids: number[];
  dates: number[];
  /** 1 for a deleted entry, else 0. */
  deleted: (0 | 1)[];
  deviceIds: (string | null)[];
  positions: (number | null)[];
}

const EMPTY: EntryColumns = { itemIds: [], ids: [], dates: [], deleted: [], deviceIds: [], positions: [] };

/**
 * Changes kept over the columns before they are merged into new columns: about 3 sqrt(n), at least 64. A write copies
 * the map (some 50 ns an entry) and a merge rebuilds the columns (some 250 ns an entry), so this keeps their sum per
 * write near its least: single-entry writes took 10-17 µs at 100-10,000 entries and 57 µs at 100,000, against 21-53
 * and 152 µs with at most 1 in 8 and at least 1,024 (a merge of 100,000 entries holds the loop some 25-35 ms, once
 * in about 950 writes).
 */
const mergeAt = (stored: number) => Math.max(64, Math.ceil(3 * Math.sqrt(stored)));

/**
 * A history's entries, read-only: the columns of its last snapshot (or of the last merge), found by binary search,
 * under a small map of the entries changed since. A write's new state shares the columns and copies only that map,
 * so a write on a history of 10,000 entries copies tens of them, not 10,000; and a state decoded from its snapshot
 * builds no map at all (the cold write's budget, docs/performance.md).
 *
 * Iteration gives the columns' entries in item-id order (changed ones as changed), then the entries added since, in
 * the order they were added.
 */
export class HistoryEntries implements ReadonlyMap<string, Entry> {
  /** The entries changed or added since the columns, and how many of them the columns do not hold. */
  private readonly changes: Map<string, Entry>;
  private readonly added: number;

  private constructor(
    private readonly columns: EntryColumns,
    changes: Map<string, Entry>,
    added: number,
  ) {
    this.changes = changes;
    this.added = added;
  }

  static empty(): HistoryEntries {
    return new HistoryEntries(EMPTY, new Map(), 0);
  }

  /** Over columns sorted by item id (the caller checked them: snapshot.ts). */
  static ofColumns(columns: EntryColumns): HistoryEntries {
    return new HistoryEntries(columns, new Map(), 0);
  }

  /** A copy with `changed` set over these entries; merged into new columns once the changes grow large. */
  with(changed: Iterable<[string, Entry]>): HistoryEntries {
    const changes = new Map(this.changes);
    let added = this.added;
    for (const [itemId, entry] of changed) {
      if (!changes.has(itemId) && this.indexOf(itemId) < 0) added++;
      changes.set(itemId, entry);
    }
    const next = new HistoryEntries(this.columns, changes, added);
    return changes.size >= mergeAt(this.columns.itemIds.length) ? HistoryEntries.ofColumns(next.toColumns()) : next;
  }

  get size(): number {
    return this.columns.itemIds.length + this.added;
  }

  get(itemId: string): Entry | undefined {
    const changed = this.changes.get(itemId);
    if (changed !== undefined) return changed;
    const i = this.indexOf(itemId);
    return i < 0 ? undefined : this.entryAt(i);
  }

  has(itemId: string): boolean {
    return this.get(itemId) !== undefined;
  }

  *entries(): MapIterator<[string, Entry]> {
    const { itemIds } = this.columns;
    for (let i = 0; i < itemIds.length; i++) yield [itemIds[i], this.changes.get(itemIds[i]) ?? this.entryAt(i)];
    if (this.added === 0) return;
    for (const [itemId, entry] of this.changes) if (this.indexOf(itemId) < 0) yield [itemId, entry];
  }

  [Symbol.iterator](): MapIterator<[string, Entry]> {
    return this.entries();
  }

  *keys(): MapIterator<string> {
    for (const [itemId] of this.entries()) yield itemId;
  }

  *values(): MapIterator<Entry> {
    for (const [, entry] of this.entries()) yield entry;
  }

  forEach(callback: (entry: Entry, itemId: string, map: ReadonlyMap<string, Entry>) => void): void {
    for (const [itemId, entry] of this.entries()) callback(entry, itemId, this);
  }

  /**
   * Every entry as columns sorted by item id: the snapshot's shape. Without changes, the columns as they are. The
   * columns are sorted already: only the entries added since are sorted, then merged in, in one pass (a sort of every
   * entry held the loop 10-20 ms when a 5,000-entry batch merged into a history of 20,000).
   */
  toColumns(): EntryColumns {
    if (this.changes.size === 0) return this.columns;
    const { itemIds, ids, dates, deleted, deviceIds, positions } = this.columns;
    const added = this.added === 0 ? [] : [...this.changes.keys()].filter((itemId) => this.indexOf(itemId) < 0).sort(byCodeUnits);
    const columns: EntryColumns = { itemIds: [], ids: [], dates: [], deleted: [], deviceIds: [], positions: [] };
    const pushRow = (itemId: string, id: number, date: number, gone: 0 | 1, deviceId: string | null, position: number | null) => {
      columns.itemIds.push(itemId);
      columns.ids.push(id);
      columns.dates.push(date);
      columns.deleted.push(gone);
      columns.deviceIds.push(deviceId);
      columns.positions.push(position);
    };
    const push = (itemId: string, entry: Entry) =>
      pushRow(itemId, entry.id, entry.date, entry.deleted ? 1 : 0, entry.deviceId ?? null, entry.lastPlaybackPosition ?? null);
    let next = 0;
    for (let i = 0; i < itemIds.length; i++) {
      const itemId = itemIds[i];
      while (next < added.length && added[next] < itemId) push(added[next], this.changes.get(added[next++])!);
      const changed = this.changes.get(itemId);
      // Unchanged, the row is copied column by column: no entry object made for each of a long history's entries.
      if (changed !== undefined) push(itemId, changed);
      else pushRow(itemId, ids[i], dates[i], deleted[i], deviceIds[i], positions[i]);
    }
    while (next < added.length) push(added[next], this.changes.get(added[next++])!);
    return columns;
  }

  /** Position of `itemId` in the columns, or -1. */
  private indexOf(itemId: string): number {
    const { itemIds } = this.columns;
    let low = 0;
    let high = itemIds.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const at = itemIds[mid];
      if (at === itemId) return mid;
      if (at < itemId) low = mid + 1;
      else high = mid - 1;
    }
    return -1;
  }

  private entryAt(i: number): Entry {
    const { ids, dates, deleted, deviceIds, positions } = this.columns;
    const entry: Entry = { id: ids[i], date: dates[i], deleted: deleted[i] === 1 };
    if (deviceIds[i] !== null) entry.deviceId = deviceIds[i];
    if (positions[i] !== null) entry.lastPlaybackPosition = positions[i];
    return entry;
  }
}

/** The order of the columns: by UTF-16 code units, as `<` compares strings. */
const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
