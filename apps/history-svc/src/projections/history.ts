import type { Item } from '@udp/contracts';
import { type EventAt, type Projection, aggregateProjection, userOfScopedId, userScopedId } from '@udp/eventsourcing';
import type { Collection, ReadModelStore, Sealing } from '@udp/readmodel';
import { timeSlices } from '@udp/retry';
import { type HistoryEvent, historyStreams } from '../domain/aggregate';
import {
  type CountedAt,
  type EntryChange,
  type TrendingCounter,
  type TrendingOptions,
  trendingBucketOf,
  trendingCounter,
  trendingHorizon,
} from './trending';

/**
 * One document per (user, item): the entry as the API shows it (`Item`'s fields, libs/contracts/src/history.ts), plus
 * the stream revision of its last change, which is also its position in the user's change order (`since=<sync_token>`
 * selects by it).
 */
export interface HistoryEntryDocument extends Item {
  _id: string;
  userId: string;
  revision: number;
  /**
   * The entry as the API shows it, as JSON text, made by every write of the document: a page is the join of its
   * entries' answers (history-queries.ts). Missing only in read models written before it was kept
   * (`fillEntryAnswers`, history-upgrades.ts, adds it at start).
   */
  answer?: string;
}

/** An entry as the API shows it. */
export function toItem(doc: Omit<HistoryEntryDocument, 'answer'>): Item {
  return {
    date: doc.date,
    deleted: doc.deleted,
    ...(doc.device_id !== undefined && { device_id: doc.device_id }),
    id: doc.id,
    item_id: doc.item_id,
    ...(doc.last_playback_position !== undefined && { last_playback_position: doc.last_playback_position }),
  };
}

/** The entry with its answer made from what it holds now. */
export function withAnswer(doc: HistoryEntryDocument): HistoryEntryDocument {
  const { answer: _old, ...entry } = doc;
  return { ...entry, answer: JSON.stringify(toItem(entry)) };
}

/**
 * One document per user: the revision of the newest change applied to that user's entries. It is written
 * after the entries of the change, so a reader that sees it sees every entry up to it (a HistoryCleared
 * touches many entries, and MongoDB's updateMany is not atomic across them).
 */
export interface HistoryHeadDocument {
  _id: string;
  userId: string;
  revision: number;
  /**
   * The store's position of that change (a decimal string): unlike the revision, never the same for two states of
   * any history, even for a history erased and begun again, so it names the version of the user's entries.
   */
  position: string;
}

export const HISTORY_COLLECTION = 'history_entries';
export const HISTORY_HEADS_COLLECTION = 'history_heads';
export const entryDocumentId = (userId: string, itemId: string) => userScopedId(userId, itemId);

/**
 * What the trending projection counted of one (user, item): the entry as it last saw it, while it is live and its
 * hour in the window (else no document). Kept apart from `history_entries`, which the inline projection changes
 * before the trending projector applies the same event: the counts need the state before it.
 */
export interface TrendingWatchDocument {
  _id: string;
  userId: string;
  item_id: string;
  date: number;
  deleted: false;
  revision: number;
}
export const TRENDING_WATCHES_COLLECTION = 'trending_watches';

/**
 * How a store that seals (PostgreSQL) keeps a user's entries and watches (docs/erasure.md): the fields their queries
 * name, the item hashed with the store's key (trending asks for an item's entries across users), the user with theirs.
 */
export const HISTORY_SEALING: Sealing = {
  ownerField: 'userId',
  ownerOfId: userOfScopedId,
  fields: { userId: 'owner', item_id: 'store', date: 'plain', deleted: 'plain', revision: 'plain', answer: 'presence' },
};

/** Every read-model document of a user (erasure deletes them). */
export const historyDocumentsOfUser = (userId: string) => [
  { collection: HISTORY_COLLECTION, filter: { userId } },
  { collection: HISTORY_HEADS_COLLECTION, filter: { userId } },
  { collection: TRENDING_WATCHES_COLLECTION, filter: { userId } },
];

export function historyEntries(readModels: ReadModelStore): Collection<HistoryEntryDocument> {
  return readModels.collection<HistoryEntryDocument>(HISTORY_COLLECTION);
}

export function historyHeads(readModels: ReadModelStore): Collection<HistoryHeadDocument> {
  return readModels.collection<HistoryHeadDocument>(HISTORY_HEADS_COLLECTION);
}

export function trendingWatches(readModels: ReadModelStore): Collection<TrendingWatchDocument> {
  return readModels.collection<TrendingWatchDocument>(TRENDING_WATCHES_COLLECTION);
}

export const HISTORY_PROJECTION = 'history-entries';
/** The trending counts' own projection (single process: the entries are applied inline, the counts after). */
export const HISTORY_TRENDING_PROJECTION = 'history-trending';
/** The projection's view of time and the trending window (the trending counts keep only the window's hours). */
export type HistoryProjectionOptions = TrendingOptions;

export const DEFAULT_TRENDING: HistoryProjectionOptions = { now: () => Date.now(), windowMs: 7 * 24 * 3600 * 1000 };

/**
 * Keeps `history_entries`, `history_heads` and `trending_counts` up to date. Every write is conditional on the
 * stream revision (the counts: on the store position), so a replayed or duplicated event, or a second instance
 * applying the same event, changes nothing.
 */
export function historyProjection(readModels: ReadModelStore, options: HistoryProjectionOptions = DEFAULT_TRENDING): Projection {
  const entries = historyEntries(readModels);
  const heads = historyHeads(readModels);
  const trending = trendingCounter(readModels, entries, options);
  return aggregateProjection({
    name: HISTORY_PROJECTION,
    aggregate: historyStreams,
    async apply(event, { id: userId, revision, position, segment }) {
      const counted = { position: Number(position), key: segment === undefined ? 'all' : `s${segment}` };
      await applyToEntries(entries, trending, event, userId, { revision, counted });
      await heads.upsertIfNewer({ _id: userId, userId, revision, position: String(position) });
    },
    applyBatch: (events) => applyBatchToEntries(entries, heads, trending, events),
  });
}

/**
 * The events in hand (a distributed projector's batch) applied as `apply` applies them one by one, with a few round
 * trips for all: the entries they change read in one call (a clear: all its user's entries), evolved in memory in
 * order under the same revision guard, the trending counts changed once per (hour, item) for the whole batch, then
 * the entries and the heads each in one bulk write. Counts before entries, as one by one: a stop in between applies
 * the batch again to the entries as they were, and the counts' guards say what was counted.
 */
async function applyBatchToEntries(
  entries: Collection<HistoryEntryDocument>,
  heads: Collection<HistoryHeadDocument>,
  trending: TrendingCounter | null,
  events: Array<{ event: HistoryEvent; at: EventAt<string> }>,
): Promise<void> {
  const named = new Set<string>();
  const clearing = new Set<string>();
  for (const { event, at } of events) {
    if (event.type === 'HistoryCleared') clearing.add(at.id);
    // A recorded entry is made from its event alone: what it replaces matters to the counts only (the write itself
    // is conditional on the revision). Without counts (a user's own rows, inline), recorded entries are not read.
    else if (trending || event.type === 'HistoryItemDeleted') named.add(entryDocumentId(at.id, event.data.itemId));
  }
  const read = await Promise.all([
    entries.getMany([...named]),
    ...[...clearing].map((userId) => entries.find({ userId }, { readOnly: true })),
  ]);
  const current = new Map(read.flat().map((entry) => [entry._id, entry]));
  const changes: EntryChange[] = [];
  const changed = new Map<string, HistoryEntryDocument>();
  const headOf = new Map<string, HistoryHeadDocument>();
  for (const { event, at } of events) {
    const userId = at.id;
    const counted = { position: Number(at.position), key: at.segment === undefined ? 'all' : `s${at.segment}` };
    for (const { before, after, counts } of entryChangesOf(event, userId, at.revision, current)) {
      if (counts) changes.push({ before, after, at: counted });
      current.set(after._id, after);
      changed.set(after._id, after);
    }
    headOf.set(userId, { _id: userId, userId, revision: at.revision, position: String(at.position) });
  }
  await trending?.entriesChanged(changes);
  await entries.upsertManyIfNewer([...changed.values()]);
  await heads.upsertManyIfNewer([...headOf.values()]);
}

/** The entry a `HistoryItemRecorded` leaves, with its answer. */
function recordedEntry(
  userId: string,
  { itemId, id, date, deleted, deviceId, lastPlaybackPosition }: Extract<HistoryEvent, { type: 'HistoryItemRecorded' }>['data'],
  revision: number,
): HistoryEntryDocument {
  return withAnswer({
    _id: entryDocumentId(userId, itemId),
    userId,
    item_id: itemId,
    id,
    date,
    deleted,
    revision,
    ...(deviceId !== undefined && { device_id: deviceId }),
    ...(lastPlaybackPosition !== undefined && { last_playback_position: lastPlaybackPosition }),
  });
}

/**
 * What one event does to a user's entries, given them as they are (`current`, by id): each entry it changes, before
 * and after, and whether the change counts for trending (a clear counts only the live entries it tombstones). An
 * entry already at the event's revision or newer is left as it is.
 */
function entryChangesOf(
  event: HistoryEvent,
  userId: string,
  revision: number,
  current: ReadonlyMap<string, HistoryEntryDocument>,
): Array<{ before: HistoryEntryDocument | null; after: HistoryEntryDocument; counts: boolean }> {
  switch (event.type) {
    case 'HistoryItemRecorded': {
      const before = current.get(entryDocumentId(userId, event.data.itemId)) ?? null;
      if (before && before.revision >= revision) return [];
      return [{ before, after: recordedEntry(userId, event.data, revision), counts: true }];
    }
    case 'HistoryItemDeleted': {
      const before = current.get(entryDocumentId(userId, event.data.itemId));
      if (!before || before.revision >= revision) return [];
      return [{ before, after: withAnswer({ ...before, deleted: true, date: event.data.date, revision }), counts: true }];
    }
    case 'HistoryCleared': {
      const itemIds = new Set(event.data.itemIds);
      return [...current.values()]
        .filter((entry) => entry.userId === userId && entry.revision < revision && itemIds.has(entry.item_id))
        .map((before) => ({
          before,
          after: withAnswer({ ...before, deleted: true, date: event.data.date, revision }),
          counts: !before.deleted,
        }));
    }
  }
}

/**
 * A user's own rows only, `history_entries` and `history_heads`, applied inline from each append in a single process
 * (the trending counts: `historyTrendingProjection`). Every write is conditional on the stream revision.
 */
export function historyOwnRowsProjection(readModels: ReadModelStore): Projection {
  const entries = historyEntries(readModels);
  const heads = historyHeads(readModels);
  const applyEntries = (event: HistoryEvent, { id: userId, revision, position }: EventAt<string>) =>
    applyToEntries(entries, null, event, userId, { revision, counted: { position: Number(position), key: 'all' } });
  const writeHead = ({ id: userId, revision, position }: EventAt<string>) =>
    heads.upsertIfNewer({ _id: userId, userId, revision, position: String(position) });
  return aggregateProjection({
    name: HISTORY_PROJECTION,
    aggregate: historyStreams,
    async apply(event, at) {
      await applyEntries(event, at);
      await writeHead(at);
    },
    // A chunk of an append (a batch of entries): its entries read and written in one call each, then each user's head
    // once, at their last event (written per event it was a third of a batch's row writes). A chunk with a clear (it
    // may tombstone 100,000 entries) goes one event at a time, in slices, and the head once after it.
    async applyBatch(events) {
      if (!events.some(({ event }) => event.type === 'HistoryCleared')) return applyBatchToEntries(entries, heads, null, events);
      const lastOfUser = new Map<string, EventAt<string>>();
      for (const { event, at } of events) {
        await applyEntries(event, at);
        lastOfUser.set(at.id, at);
      }
      for (const at of lastOfUser.values()) await writeHead(at);
    },
  });
}

/**
 * The trending counts, from the events, by an asynchronous projector of their own: what each (user, item) counted
 * before an event is its `trending_watches` document, not the entry (already changed inline). The counts are
 * changed first, then the watch: a stop in between applies the event again, finds the watch unchanged, and the
 * counts' position says the change was made.
 */
export function historyTrendingProjection(readModels: ReadModelStore, options: HistoryProjectionOptions = DEFAULT_TRENDING): Projection {
  const watches = trendingWatches(readModels);
  const trending = trendingCounter(readModels, watches, options);
  let prunedBefore = 0;
  /** The watch an entry's state leaves (none when deleted or older than the window). */
  const watchOf = (userId: string, entry: { item_id: string; date: number; deleted: boolean }, revision: number) =>
    !entry.deleted && trendingBucketOf(entry.date) >= trendingHorizon(options.now(), options.windowMs)
      ? { _id: entryDocumentId(userId, entry.item_id), userId, item_id: entry.item_id, date: entry.date, deleted: false as const, revision }
      : null;
  /** The watch after an event: written, or deleted when there was one (an entry never in the window has none to delete). */
  const settle = async (id: string, stored: TrendingWatchDocument | null, next: TrendingWatchDocument | null) => {
    if (next) await watches.upsertIfNewer(next);
    else if (stored) await watches.deleteMany({ _id: id });
  };
  /** Watches that left the window count nowhere: dropped once an hour, as the counts' hours are. */
  const prune = async () => {
    const horizon = trendingHorizon(options.now(), options.windowMs);
    if (horizon <= prunedBefore) return;
    await watches.deleteMany({ date: { $lt: horizon } });
    prunedBefore = horizon;
  };
  const countedAt = ({ position, segment }: EventAt<string>): CountedAt => ({
    position: Number(position),
    key: segment === undefined ? 'all' : `s${segment}`,
  });
  async function applyOne(event: HistoryEvent, at: EventAt<string>): Promise<void> {
    const { id: userId, revision } = at;
    const counted = countedAt(at);
    await prune();
    switch (event.type) {
      case 'HistoryItemRecorded': {
        const { itemId, date, deleted } = event.data;
        const id = entryDocumentId(userId, itemId);
        const stored = await watches.get(id);
        if (stored && stored.revision >= revision) return;
        await trending.entryChanged(stored, { _id: id, item_id: itemId, date, deleted }, counted);
        await settle(id, stored, watchOf(userId, { item_id: itemId, date, deleted }, revision));
        return;
      }
      case 'HistoryItemDeleted': {
        const id = entryDocumentId(userId, event.data.itemId);
        const stored = await watches.get(id);
        if (!stored || stored.revision >= revision) return;
        await trending.entryChanged(stored, { ...stored, deleted: true, date: event.data.date }, counted);
        await settle(id, stored, null);
        return;
      }
      case 'HistoryCleared': {
        const itemIds = new Set(event.data.itemIds);
        const live = await watches.find({ userId, revision: { $lt: revision } }, { readOnly: true });
        const { slice } = timeSlices();
        for (const stored of live.filter((watch) => itemIds.has(watch.item_id))) {
          await trending.entryChanged(stored, { ...stored, deleted: true, date: event.data.date }, counted);
          await settle(stored._id, stored, null);
          await slice();
        }
        return;
      }
    }
  }
  return aggregateProjection({
    name: HISTORY_TRENDING_PROJECTION,
    aggregate: historyStreams,
    apply: applyOne,
    /**
     * The events in hand (a batch's 100 at a time) as `applyOne` applies them one by one, with the watches read in
     * one call, the counts changed once per (hour, item) for all (`entriesChanged`), then the watches written and
     * deleted in one call each. Counts before watches, as one by one: a stop in between applies the events again to
     * the watches as they were, and the counts' guards say what was counted. A clear (it may name 100,000 items) goes
     * one event at a time, in slices.
     */
    async applyBatch(events) {
      if (events.some(({ event }) => event.type === 'HistoryCleared')) {
        for (const { event, at } of events) await applyOne(event, at);
        return;
      }
      await prune();
      const named = events.flatMap(({ event, at }) =>
        event.type === 'HistoryCleared' ? [] : [{ event, at, id: entryDocumentId(at.id, event.data.itemId) }],
      );
      const stored = new Map((await watches.getMany([...new Set(named.map(({ id }) => id))])).map((watch) => [watch._id, watch]));
      const current = new Map<string, TrendingWatchDocument | null>(stored);
      const changes: EntryChange[] = [];
      for (const { event, at, id } of named) {
        const before = current.get(id) ?? null;
        if (event.type === 'HistoryItemRecorded') {
          if (before && before.revision >= at.revision) continue;
          const { itemId, date, deleted } = event.data;
          changes.push({ before, after: { _id: id, item_id: itemId, date, deleted }, at: countedAt(at) });
          current.set(id, watchOf(at.id, { item_id: itemId, date, deleted }, at.revision));
        } else {
          if (!before || before.revision >= at.revision) continue;
          changes.push({ before, after: { ...before, deleted: true, date: event.data.date }, at: countedAt(at) });
          current.set(id, null);
        }
      }
      await trending.entriesChanged(changes);
      // Those the batch changed: an unchanged one is still the object read.
      const kept = [...current.values()].filter(
        (watch): watch is TrendingWatchDocument => watch !== null && watch !== stored.get(watch._id),
      );
      const gone = [...current].filter(([id, watch]) => watch === null && stored.has(id)).map(([id]) => id);
      await watches.upsertManyIfNewer(kept);
      if (gone.length) await watches.deleteMany({ _id: { $in: gone } });
    },
  });
}

/**
 * Each change of an entry is counted for trending first (unless `trending` is null: counted by its own projection),
 * then written: an entry already at the event's revision was counted already (see `trendingCounter`).
 */
async function applyToEntries(
  entries: Collection<HistoryEntryDocument>,
  trending: TrendingCounter | null,
  event: HistoryEvent,
  userId: string,
  { revision, counted: position }: { revision: number; counted: CountedAt },
): Promise<void> {
  switch (event.type) {
    case 'HistoryItemRecorded': {
      const entry = recordedEntry(userId, event.data, revision);
      const stored = await entries.get(entry._id);
      if (stored && stored.revision >= revision) return;
      await trending?.entryChanged(stored, entry, position);
      await entries.upsertIfNewer(entry);
      return;
    }
    case 'HistoryItemDeleted': {
      const stored = await entries.get(entryDocumentId(userId, event.data.itemId));
      if (!stored || stored.revision >= revision) return;
      const tombstone = withAnswer({ ...stored, deleted: true, date: event.data.date, revision });
      await trending?.entryChanged(stored, tombstone, position);
      await entries.upsertIfNewer(tombstone);
      return;
    }
    case 'HistoryCleared': {
      // Picked with a set: `$in` on the memory read model tests every id for every entry.
      const itemIds = new Set(event.data.itemIds);
      const older = await entries.find({ userId, revision: { $lt: revision } }, { readOnly: true });
      // Each tombstone written with its own answer (one UPDATE for all cannot make each entry's text).
      const { slice } = timeSlices();
      for (const stored of older.filter((entry) => itemIds.has(entry.item_id))) {
        const tombstone = withAnswer({ ...stored, deleted: true, date: event.data.date, revision });
        if (trending && !stored.deleted) await trending.entryChanged(stored, tombstone, position);
        await entries.upsertIfNewer(tombstone);
        await slice();
      }
      return;
    }
  }
}
