// The trending query before and after the counts, on one read model of many history entries (not a test):
// `node dist/bench/trending-measure.js <users> <entries per user> <items> <runs>`, built by bench/trending.mjs.
import { MemoryReadModelStore } from '@udp/readmodel';
import { historyStream } from '../apps/history-svc/src/domain/aggregate';
import { HISTORY_COLLECTION, historyEntries, historyProjection } from '../apps/history-svc/src/projections/history';
import { trendingCounts, trendingHorizon, trendingIndexes, trendingItemTotals } from '../apps/history-svc/src/projections/trending';
import { trendingItems } from '../apps/history-svc/src/projections/trending-queries';
import { recordedEvents } from '../libs/test-system/src/api-specification';

const [users, perUser, items, runs] = process.argv.slice(2).map(Number);
const DAY = 24 * 3600 * 1000;
const WINDOW = 7 * DAY;
const now = Date.UTC(2026, 10, 25, 6, 17);
const query = { now, windowMs: WINDOW, minUsers: 3, limit: 20 };

/** The query as it was before the counts (b5b195a): every live entry of the window, grouped by item. */
async function scanned(entries: ReturnType<typeof historyEntries>, start = query.now - query.windowMs) {
  const recent = await entries.find({ date: { $gte: start }, deleted: false });
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

async function timed(run: () => Promise<unknown>): Promise<{ median: number; p95: number }> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], p95: times[Math.min(times.length - 1, Math.ceil(times.length * 0.95) - 1)] };
}

/** A memory read model with the indexes history-svc declares (app.ts). */
async function indexedStore(): Promise<MemoryReadModelStore> {
  const readModels = new MemoryReadModelStore();
  await readModels.ensureIndex(HISTORY_COLLECTION, { userId: 1, date: -1, item_id: 1 });
  await readModels.ensureIndex(HISTORY_COLLECTION, { userId: 1, revision: 1, item_id: 1 });
  await readModels.ensureIndex(HISTORY_COLLECTION, { item_id: 1, date: -1 });
  await trendingIndexes(readModels);
  return readModels;
}

async function main(): Promise<void> {
  const readModels = await indexedStore();
  const projection = historyProjection(readModels, { now: () => now, windowMs: WINDOW });
  // Items by popularity (item k drawn with weight 1/(k+1)), dates spread over the last 10 days.
  let seed = 42;
  const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  const harmonic = Array.from({ length: items }, (_, k) => 1 / (k + 1));
  const total = harmonic.reduce((a, b) => a + b, 0);
  const pick = () => {
    let r = random() * total;
    for (let k = 0; k < items; k++) if ((r -= harmonic[k]) <= 0) return k;
    return items - 1;
  };
  let position = 1n;
  const log = [];
  for (let u = 0; u < users; u++) {
    const seen = new Set<number>();
    const events = [];
    while (events.length < perUser) {
      const item = pick();
      if (seen.has(item)) continue;
      seen.add(item);
      const date = Math.round(now - random() * 10 * DAY);
      events.push({ type: 'HistoryItemRecorded', data: { itemId: `urn:item:${item}`, id: events.length + 1, date, deleted: false } });
    }
    log.push(...recordedEvents(historyStream(`user-${u}`), events, 0, position));
    position += BigInt(events.length);
  }
  // The projection's work without counting (a window that ends before every entry), then with it.
  const baseline = await indexedStore();
  const uncounting = historyProjection(baseline, { now: () => now + 30 * DAY, windowMs: 60_000 });
  let started = performance.now();
  for (const event of log) await uncounting.apply(event);
  const baselineMs = performance.now() - started;
  started = performance.now();
  for (const event of log) await projection.apply(event);
  const projectMs = performance.now() - started;
  const entries = historyEntries(readModels);
  const counts = trendingCounts(readModels);
  const answer = JSON.stringify(await trendingItems(readModels, query));
  // The counts start the window at the start of its first hour: the same answer as a scan from there.
  const same = JSON.stringify(await scanned(entries, trendingHorizon(now, WINDOW))) === answer;
  const sameExact = JSON.stringify(await scanned(entries)) === answer;
  const before = await timed(() => scanned(entries));
  const after = await timed(() => trendingItems(readModels, query));
  const countDocs = (await counts.find({}, { readOnly: true })).length;
  const itemDocs = (await trendingItemTotals(readModels).find({}, { readOnly: true })).length;
  const entryDocs = (await entries.find({}, { readOnly: true })).length;
  const f = (ms: number) => ms.toFixed(2);
  console.log(`entries ${entryDocs} (${users} users x ${perUser}, ${items} items, dates over 10 days, window 7 days)`);
  const perEvent = (ms: number) => ((ms * 1000) / entryDocs).toFixed(1);
  console.log(
    `projected in ${(projectMs / 1000).toFixed(1)} s: ${perEvent(projectMs)} us per event (${perEvent(baselineMs)} us without counting)`,
  );
  console.log(`documents: trending_counts ${countDocs}, trending_items ${itemDocs}`);
  console.log(`same answer as the scan from the window's first hour: ${same}; from the exact window start: ${sameExact}`);
  console.log(`before (scan of the entries): median ${f(before.median)} ms, p95 ${f(before.p95)} ms (${runs} runs)`);
  console.log(`after (counts per item and hour): median ${f(after.median)} ms, p95 ${f(after.p95)} ms (${runs} runs)`);
  console.log(`ratio: ${(before.median / after.median).toFixed(0)}x`);
}

void main();
