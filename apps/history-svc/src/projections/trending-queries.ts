import type { ReadModelStore } from '@udp/readmodel';
import { type TrendingItem, type TrendingQuery, sumOfHours, trendingCounts, trendingHorizon, trendingItemTotals } from './trending';

/**
 * The most-watched items over the window, from the totals the projection keeps per item (summed from the item's
 * hours, each user counting once since an entry is in one hour at a time), read in their order until the answer
 * is complete: a few documents per item listed, whatever the number of history entries. A total whose oldest hour
 * has left the window is too high; such an item is summed here from its hours (the projection does it too, once an
 * hour). Ties: newest watch first, then item id.
 */
export async function trendingItems(readModels: ReadModelStore, query: TrendingQuery): Promise<TrendingItem[]> {
  const horizon = trendingHorizon(query.now, query.windowMs);
  const totals = trendingItemTotals(readModels);
  const counts = trendingCounts(readModels);
  const found: TrendingItem[] = [];
  // Stored totals are upper bounds of the true ones (stale ones only too high), in (users, date) order: once the
  // answer holds `limit` items that rank above the next stored total, no later item can enter it.
  for (let page = Math.max(2 * query.limit, 50); ; page *= 4) {
    const candidates = await totals.find({ kind: 'item' }, { sort: { users: -1, date: -1, item_id: 1 }, limit: page, readOnly: true });
    found.length = 0;
    let complete = candidates.length < page;
    for (const candidate of candidates) {
      if (candidate.users < query.minUsers) {
        complete = true;
        break;
      }
      const ranked = found.length >= query.limit ? found.sort(byRank)[query.limit - 1] : undefined;
      if (ranked && byRank(ranked, candidate) <= 0) {
        complete = true;
        break;
      }
      const item =
        candidate.oldest >= horizon ? candidate : { item_id: candidate.item_id, ...(await sumOfHours(counts, candidate.item_id, horizon)) };
      if (item.users >= query.minUsers) found.push({ item_id: item.item_id, users: item.users, date: item.date });
    }
    if (complete) return found.sort(byRank).slice(0, query.limit);
  }
}

const byRank = (a: TrendingItem, b: TrendingItem) =>
  b.users - a.users || b.date - a.date || (a.item_id < b.item_id ? -1 : a.item_id > b.item_id ? 1 : 0);
