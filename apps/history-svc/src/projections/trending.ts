import type { Collection } from '@udp/readmodel';
import type { HistoryEntryDocument } from './history';

export interface TrendingItem {
  item_id: string;
  /** Distinct users who watched the item in the window. */
  users: number;
  /** Newest watch of the item in the window (ms). */
  date: number;
}

export interface TrendingQuery {
  now: number;
  windowMs: number;
  /** An item is listed only when at least this many distinct users watched it, so no one's viewing shows. */
  minUsers: number;
  limit: number;
}

/**
 * The most-watched items over a window, from the history read model (fed by the history events): one entry per
 * (user, item), so the entries of an item in the window count its distinct users. Deleted entries do not count
 * (a user who removed an item from their history no longer contributes to it). Ties: newest watch first.
 */
export async function trendingItems(entries: Collection<HistoryEntryDocument>, query: TrendingQuery): Promise<TrendingItem[]> {
  const recent = await entries.find({ date: { $gte: query.now - query.windowMs }, deleted: false });
  const byItem = new Map<string, { users: Set<string>; date: number }>();
  for (const entry of recent) {
    let item = byItem.get(entry.item_id);
    if (!item) byItem.set(entry.item_id, (item = { users: new Set(), date: 0 }));
    item.users.add(entry.userId);
    item.date = Math.max(item.date, entry.date);
  }
  return [...byItem.entries()]
    .filter(([, item]) => item.users.size >= query.minUsers)
    .map(([item_id, item]) => ({ item_id, users: item.users.size, date: item.date }))
    .sort((a, b) => b.users - a.users || b.date - a.date || (a.item_id < b.item_id ? -1 : 1))
    .slice(0, query.limit);
}
