import { Router } from 'express';
import { type Item, historyApi, type NewItem } from '@udp/contracts';
import type { CommandHandler } from '@udp/eventsourcing';
import { mountRoute, userIdOf, sendJsonTextConditionally } from '@udp/http-kit';
import type { HistoryEvent } from '../domain/aggregate';
import type { Entry, HistoryCommand, HistoryState, ItemToRecord } from '../domain/decider';
import {
  type HistoryAnswers,
  type HistoryReadModel,
  historyHead,
  historyJson,
  listHistory,
  positions,
} from '../projections/history-queries';

export interface HistoryRouteDeps {
  /** The history aggregate's command handler (app.ts). */
  handle: CommandHandler<HistoryCommand, HistoryEvent, HistoryState, string>;
  model: HistoryReadModel;
  now: () => number;
  /** Tags a version of a user's list for its ETag, keyed (`versionTagger`): a tag tells no store position. */
  tagVersion: (version: string) => string;
  /** Answers already given, by user, version and query (none: every list is read). */
  answers?: HistoryAnswers;
}

/** An entry of the history as the API shows it. */
const itemOf = (itemId: string, entry: Entry): Item => ({
  date: entry.date,
  deleted: entry.deleted,
  ...(entry.deviceId !== undefined && { device_id: entry.deviceId }),
  id: entry.id,
  item_id: itemId,
  ...(entry.lastPlaybackPosition !== undefined && { last_playback_position: entry.lastPlaybackPosition }),
});

/** HTTP <-> commands and queries. */
export function historyRoutes({ handle, model, now, tagVersion, answers }: HistoryRouteDeps): Router {
  const router = Router();

  const toRecord = (item: NewItem, serverTime: number): ItemToRecord => ({
    itemId: item.item_id,
    date: item.date ?? serverTime,
    deleted: item.deleted,
    deviceId: item.device_id,
    lastPlaybackPosition: item.last_playback_position,
  });

  for (const api of [historyApi.v2, historyApi.unversioned]) {
    mountRoute(router, api.list, async ({ query }, req, res) => {
      const userId = userIdOf(res);
      // The same version of the user's history and the same query string answer the same bytes (the text as sent:
      // parsing is deterministic, and a query written another way only gets another tag, or another kept answer).
      const search = req.url.indexOf('?');
      const queryText = search < 0 ? '' : req.url.slice(search + 1);
      const generation = answers?.generation() ?? 0;
      // The page is read at this head's version (`listHistory`), so its tag and its kept answer are of this version.
      const head = await historyHead(model, userId);
      const tag = tagVersion(`${userId}\n${head.version}\n${queryText}`);
      // Kept by the route too: the two versions of the API answer alike today, which a kept answer must not assume.
      const keptAs = `${api.list.path}?${queryText}`;
      const known = answers?.get(userId, head.version, keptAs);
      if (known !== undefined) return sendJsonTextConditionally(req, res, () => known, tag);
      const page = await listHistory(model, userId, query, head);
      const text = () => historyJson(page);
      sendJsonTextConditionally(req, res, answers ? () => answers.remember(userId, head.version, keptAs, text(), generation) : text, tag);
    });

    mountRoute(router, api.add, async ({ body }, _req, res) => {
      const { newState } = await handle(userIdOf(res), { type: 'RecordItems', data: { items: [toRecord(body, now())] } });
      // The stored entry: the new one, or the newer one that was kept.
      res.status(200).json(itemOf(body.item_id, newState.entries.get(body.item_id)!));
    });
    mountRoute(router, api.clear, async (_input, _req, res) => {
      await handle(userIdOf(res), { type: 'ClearHistory', data: {} });
      res.status(204).end();
    });

    mountRoute(router, api.addBatch, async ({ body }, _req, res) => {
      const serverTime = now();
      await handle(userIdOf(res), { type: 'RecordItems', data: { items: body.data.map((i) => toRecord(i, serverTime)) } });
      res.status(204).end();
    });

    mountRoute(router, api.positions, async ({ query }, _req, res) => {
      const answer = await positions(model, userIdOf(res), query);
      res.setHeader('sync-token', answer.syncToken).json(answer.positions);
    });
  }

  mountRoute(router, historyApi.deleteByItemId, async ({ params }, _req, res) => {
    await handle(userIdOf(res), { type: 'DeleteItem', data: { itemId: params.itemId } });
    res.status(204).end();
  });

  /** Deprecated: delete by technical id, unversioned path only. */
  mountRoute(router, historyApi.deleteById, async ({ params }, _req, res) => {
    await handle(userIdOf(res), { type: 'DeleteItemById', data: { id: params.id } });
    res.status(204).end();
  });

  return router;
}
