import type { RecordedEvent } from '@udp/eventstore';
import { recordedEvents } from '@udp/test-system';
import { type HistoryEvent, historyStream } from '../domain/aggregate';
import type { HistoryEntryDocument } from '../projections/history';
import { type TrendingQuery, trendingHorizon } from '../projections/trending';
import { cleared, deleted, recorded } from './history-events';

/** Test support for the trending specs (unit and MongoDB): histories of many users, and the answer of a scan. */
const DAY = 24 * 3600 * 1000;

/** A global log of the users' events: revisions per user, positions across all. */
export function log(list: Array<[user: string, event: HistoryEvent]>): RecordedEvent[] {
  const revisions = new Map<string, number>();
  return list.map(([user, event], i) => {
    const revision = revisions.get(user) ?? 0;
    revisions.set(user, revision + 1);
    return recordedEvents(historyStream(user), [event], revision, BigInt(i + 1))[0];
  });
}

/** What the trending answer was before the counts: a scan of every live entry from the window's first hour on. */
export async function scanned(entries: HistoryEntryDocument[], query: TrendingQuery) {
  const byItem = new Map<string, { users: number; date: number }>();
  for (const e of entries) {
    if (e.deleted || e.date < trendingHorizon(query.now, query.windowMs)) continue;
    const item = byItem.get(e.item_id) ?? { users: 0, date: 0 };
    byItem.set(e.item_id, { users: item.users + 1, date: Math.max(item.date, e.date) });
  }
  return [...byItem]
    .map(([item_id, item]) => ({ item_id, ...item }))
    .filter((i) => i.users >= query.minUsers)
    .sort((a, b) => b.users - a.users || b.date - a.date || (a.item_id < b.item_id ? -1 : 1))
    .slice(0, query.limit);
}

/**
 * Random histories: re-watches (moving an entry between hours), deletions, delete-alls, old and future dates. `spread`:
 * how far back the dates go (a short one puts many users' watches of an item in the same hours).
 */
export function randomHistory(seed: number, size: number, now: number, spread = 9 * DAY): Array<[string, HistoryEvent]> {
  // mulberry32: a small seeded generator, so a failing seed can be replayed.
  let state = seed;
  const random = (n: number) => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
  const ids = new Map<string, number>();
  const events: Array<[string, HistoryEvent]> = [];
  for (let i = 0; i < size; i++) {
    const user = `u${random(12)}`;
    const item = `urn:item:${random(8)}`;
    const key = `${user}/${item}`;
    const id = ids.get(key) ?? ids.size + 1;
    ids.set(key, id);
    const date = now - random(spread) + (random(10) === 0 ? 3 * DAY : 0);
    const kind = random(20);
    if (kind === 0) events.push([user, deleted(item, id, date)]);
    else if (kind === 1) events.push([user, cleared(date, [item, `urn:item:${random(8)}`])]);
    else events.push([user, recorded(item, id, date, { deleted: kind === 2 })]);
  }
  return events;
}
