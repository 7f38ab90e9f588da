import { Router } from 'express';
import { type Item, historyApi, type NewItem } from '@udp/contracts';
import type { CommandHandler } from '@udp/eventsourcing';
import { mountRoute, userIdOf, sendJsonTextConditionally } from '@udp/http-kit';
import type { HistoryEvent } from '../domain/aggregate';
import type { Entry, HistoryCommand, HistoryState, ItemToRecord } from '../domain/decider';
import type { HistoryAnswers } from '../projections/answer-cache';
import { type HistoryHead, type HistoryReadModel, historyHead, historyJson, listHistory, positions } from '../projections/history-queries';

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

  /**
   * `read` of the user's history made with no write of theirs half applied, with the head it was made at: a clear or a
   * batch is one append, but its rows are written a few milliseconds at a time, other requests in between. The user's
   * write being applied is waited for (other users' reads wait for nothing); a read during which one began or ended
   * (one is under way, or the head moved) is made again, so the read shows its head's version and no other.
   */
  const readWhole = async <T>(userId: string, read: (head: HistoryHead) => Promise<T>): Promise<{ head: HistoryHead; read: T }> => {
    for (;;) {
      const applying = handle.applying?.(userId);
      if (applying) {
        await applying;
        continue;
      }
      const head = await historyHead(model, userId);
      const result = await read(head);
      if (!handle.applying?.(userId) && (await historyHead(model, userId)).version === head.version) return { head, read: result };
    }
  };

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
      const tagOf = (head: HistoryHead) => tagVersion(`${userId}\n${head.version}\n${queryText}`);
      // Kept by the route too: the two versions of the API answer alike today, which a kept answer must not assume.
      const keptAs = `${api.list.path}?${queryText}`;
      // A kept answer shows its version whole (read so, below): given even while a write of the user is being applied.
      const current = await historyHead(model, userId);
      const known = answers?.get(userId, current.version, keptAs);
      if (known !== undefined) return sendJsonTextConditionally(req, res, () => known, tagOf(current));
      // The page is read at this head's version (`listHistory`), so its tag and its kept answer are of this version.
      const { head, read: page } = await readWhole(userId, (at) => listHistory(model, userId, query, at));
      const text = () => historyJson(page);
      const answer = answers ? () => answers.remember(userId, head.version, keptAs, text(), generation) : text;
      sendJsonTextConditionally(req, res, answer, tagOf(head));
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
      const userId = userIdOf(res);
      const { read: answer } = await readWhole(userId, () => positions(model, userId, query));
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
