import { HISTORY_LIMITS } from '@udp/contracts';
import { internalReadRoutes, serviceHttpApp, versionTagger } from '@udp/http-kit';
import {
  SNAPSHOTS_COLLECTION,
  serviceStateCache,
  startServiceProjections,
  type ServiceApp,
  type ServiceDeps,
  type SnapshotDeps,
} from '@udp/runtime';
import { historyChanges } from './api/changes-route';
import { internalRoutes } from './api/internal-routes';
import { historyRoutes } from './api/routes';
import { historyAggregate, historyStreams, historyStreamsOfUser } from './domain/aggregate';
import {
  HISTORY_COLLECTION,
  HISTORY_HEADS_COLLECTION,
  HISTORY_PROJECTION,
  HISTORY_SEALING,
  TRENDING_WATCHES_COLLECTION,
  historyEntries,
  historyDocumentsOfUser,
  historyHeads,
  historyOwnRowsProjection,
  historyProjection,
  historyTrendingProjection,
} from './projections/history';
import { historyChangesPublisher } from './projections/history-changes';
import { HistoryAnswers } from './projections/answer-cache';
import { historyStateFromRows } from './projections/history-state';
import { trendingIndexes } from './projections/trending';
import { NETWORKED_ERASURE_PAGE, erasingTrendingToo } from './projections/history-erasure';
import { buildTrendingCounts, buildTrendingWatches, fillEntryAnswers } from './projections/history-upgrades';

export interface HistoryServiceDeps extends ServiceDeps, SnapshotDeps {
  /** How many users' folded histories are kept in memory for writes (least recently used dropped). */
  cachedHistories?: number;
  /**
   * Room for the answers already given (`HistoryAnswers`), in characters of their JSON; 0: none kept. Default 8 MiB.
   * Given an instance, that one (a test looks into it).
   */
  answerCache?: number | HistoryAnswers;
  trendingWindowMs?: number;
  trendingMinUsers?: number;
  /** Per-user quota: entries of a history, tombstones included (HISTORY_MAX_ENTRIES). */
  maxEntries?: number;
}

/** Everything history-svc is, given its adapters: tests build it on memory adapters in one line. */
export async function createHistoryService(deps: HistoryServiceDeps): Promise<ServiceApp> {
  const { readModels, bus } = deps;
  // Before any of them is used: a store that seals keeps them so (docs/erasure.md, "PostgreSQL").
  readModels.seal?.(HISTORY_COLLECTION, HISTORY_SEALING);
  readModels.seal?.(TRENDING_WATCHES_COLLECTION, HISTORY_SEALING);
  readModels.seal?.(SNAPSHOTS_COLLECTION, { ownerOfId: (streamId) => historyStreams.idOf(streamId), fields: {} });
  const now = deps.now ?? Date.now;
  const trending = { now, windowMs: deps.trendingWindowMs ?? 7 * 24 * 3600 * 1000 };
  // The list order; `deleted` last, so a list without tombstones tests it in the index, not in each document; with
  // the user (the key is a hash of it) and each entry's answer, so a page is read from the index alone. An index of
  // the same keys from before, without them, goes.
  const listOrder = { userId: 1, date: -1, item_id: 1, deleted: 1 } as const;
  await readModels.ensureIndex(HISTORY_COLLECTION, listOrder, { include: ['userId', 'answer'] });
  await readModels.dropIndex?.(HISTORY_COLLECTION, listOrder);
  await readModels.ensureIndex(HISTORY_COLLECTION, { userId: 1, revision: 1, item_id: 1 });
  // Erasure deletes a user's head by its user.
  await readModels.ensureIndex(HISTORY_HEADS_COLLECTION, { userId: 1 });
  await trendingIndexes(readModels);
  // One process (no segments): each user's entries and head are applied inline from the append, the trending counts
  // by their own projector; the distributed mode's replicas apply both with one projection, by segments.
  const inline = !deps.segments;
  // The newest watch of an item in an hour, found again when the newest leaves (trending, as the projection applies):
  // in the watches inline, in the entries with segments. Inline the entries' index would be a fourth index every
  // entry write keeps for no query: a file that has it from before loses it.
  const newestWatch = { item_id: 1, date: -1 } as const;
  if (inline) {
    await readModels.ensureIndex(TRENDING_WATCHES_COLLECTION, newestWatch, { queriedByProjection: true });
    await readModels.ensureIndex(TRENDING_WATCHES_COLLECTION, { userId: 1 }, { queriedByProjection: true });
    await readModels.dropIndex?.(HISTORY_COLLECTION, newestWatch);
  } else {
    await readModels.ensureIndex(HISTORY_COLLECTION, newestWatch, { queriedByProjection: true });
  }
  // Entries of an earlier version's read models get their answers, once, before anything reads or projects.
  await fillEntryAnswers(readModels);
  await buildTrendingCounts(readModels, historyEntries(readModels), { ...trending, projection: HISTORY_PROJECTION });
  if (inline) await buildTrendingWatches(readModels, trending);
  const aggregate = historyAggregate({ maxEntries: deps.maxEntries ?? HISTORY_LIMITS.maxEntries });
  // Folded states in memory and as snapshots: an erased user's are forgotten, all saved at stop.
  const model = { entries: historyEntries(readModels), heads: historyHeads(readModels) };
  // A user in no cache starts from their rows (docs/performance.md, "Cold users").
  const foldedStates = serviceStateCache(deps, aggregate, deps.cachedHistories, historyStateFromRows(model));
  const answers =
    deps.answerCache instanceof HistoryAnswers
      ? deps.answerCache
      : deps.answerCache === 0
        ? undefined
        : new HistoryAnswers(deps.answerCache ?? 8 * 1024 * 1024);
  // The erasure participant deletes through `erasingTrendingToo`: an erased user's entries leave the counts.
  const projections = await startServiceProjections(
    {
      ...deps,
      readModels: inline
        ? erasingTrendingToo(readModels, trending, TRENDING_WATCHES_COLLECTION)
        : erasingTrendingToo(readModels, trending, HISTORY_COLLECTION, NETWORKED_ERASURE_PAGE),
    },
    {
      service: 'history-svc',
      ...(inline
        ? { projection: historyOwnRowsProjection(readModels), inline, shared: [historyTrendingProjection(readModels, trending)] }
        : { projection: historyProjection(readModels, trending) }),
      publisher: historyChangesPublisher(bus),
      publishesChangesOnly: true,
      erasure: { streamsOfUser: historyStreamsOfUser, documentsOfUser: historyDocumentsOfUser },
      states: foldedStates,
      // An erased user's answers kept in memory go with their folded states, before their stores are emptied.
      ...(answers && { inMemory: [{ forget: async (streamId: string) => answers.forget(aggregate.idOf(streamId)) }] }),
    },
  );
  const changes = historyChanges(model);
  const app = serviceHttpApp({
    ...projections.httpOptions,
    maxBodyBytes: deps.maxBodyBytes ?? 8 * 1024 * 1024,
    routes: [
      historyRoutes({
        handle: projections.commandHandler(aggregate, foldedStates),
        model,
        now,
        // Keyed by the secret every replica shares (INTERNAL_AUTH_SECRET; embedded: its file in DATA_DIR).
        tagVersion: versionTagger(deps.identity.derivedKey('history-etag')),
        answers,
      }),
      internalRoutes({
        readModels,
        now,
        trendingWindowMs: deps.trendingWindowMs ?? 7 * 24 * 3600 * 1000,
        trendingMinUsers: deps.trendingMinUsers ?? 3,
      }),
      internalReadRoutes(changes),
    ],
  });
  return { app, internal: changes, stop: projections.stop };
}
