import { Router } from 'express';
import { historyApi, type NewItem } from '@udp/contracts';
import { type Snapshotting, type StreamStateCache, type Unstamped, type WriteSide, handleCommandVisibly } from '@udp/eventsourcing';
import { StoreUnavailableError } from '@udp/eventstore';
import { mountRoute, userIdOf, sendJsonTextConditionally } from '@udp/http-kit';
import { type HistoryCommand, type HistoryQuotas, type HistoryState, type ItemToRecord, historyDecider } from '../domain/decider';
import { historyStream } from '../domain/events';
import { entryDocumentId } from '../projections/history';
import { type HistoryReadModel, historyJson, listHistory, positions, toItem } from '../projections/history-queries';

export interface HistoryRouteDeps {
  write: WriteSide;
  /** Folded histories by user, so a write reads only what is new. */
  states: StreamStateCache<HistoryState>;
  /** Saved histories, so a write on a long history not in `states` reads only what is newer than its snapshot. */
  snapshots?: Snapshotting<HistoryState>;
  model: HistoryReadModel;
  quotas: HistoryQuotas;
  now: () => number;
}

/** HTTP <-> commands and queries. History never retries a conflicting append: the spec answers 429. */
export function historyRoutes({ write, states, snapshots, model, quotas, now }: HistoryRouteDeps): Router {
  const router = Router();
  const decider = historyDecider(quotas);
  const execute = (userId: string, command: Unstamped<HistoryCommand>) =>
    handleCommandVisibly(
      write,
      historyStream(userId),
      decider,
      { ...command, metadata: { now: now() } },
      { retries: 0, cache: states, snapshots },
    );

  const toRecord = (item: NewItem, serverTime: number): ItemToRecord => ({
    itemId: item.item_id,
    date: item.date ?? serverTime,
    deleted: item.deleted,
    deviceId: item.device_id,
    lastPlaybackPosition: item.last_playback_position,
  });

  for (const api of [historyApi.v2, historyApi.unversioned]) {
    mountRoute(router, api.list, async ({ query }, req, res) => {
      const page = await listHistory(model, userIdOf(res), query);
      // The same version of the history and the same (parsed) query answer the same bytes.
      const version = page.version === undefined ? undefined : `${page.version} ${JSON.stringify(query)}`;
      sendJsonTextConditionally(req, res, () => historyJson(page), version);
    });

    mountRoute(router, api.add, async ({ body }, _req, res) => {
      const userId = userIdOf(res);
      const written = await execute(userId, { type: 'RecordItems', data: { items: [toRecord(body, now())] } });
      // The stored entry: the new one, or the newer one that was kept.
      const stored = await model.entries.get(entryDocumentId(userId, body.item_id)).catch((error: unknown) => {
        // The write is durable: it must be acknowledged even when the read model cannot be read right now.
        const recorded = written.events.find((e) => e.type === 'HistoryItemRecorded' && e.data.itemId === body.item_id);
        if (!(error instanceof StoreUnavailableError) || recorded?.type !== 'HistoryItemRecorded') throw error;
        const { itemId, id, date, deleted, deviceId, lastPlaybackPosition } = recorded.data;
        return {
          _id: '',
          userId,
          item_id: itemId,
          id,
          date,
          deleted,
          device_id: deviceId,
          last_playback_position: lastPlaybackPosition,
          revision: written.revision,
        };
      });
      res.status(200).json(stored ? toItem(stored) : undefined);
    });

    mountRoute(router, api.clear, async (_input, _req, res) => {
      await execute(userIdOf(res), { type: 'ClearHistory', data: {} });
      res.status(204).end();
    });

    mountRoute(router, api.addBatch, async ({ body }, _req, res) => {
      const serverTime = now();
      await execute(userIdOf(res), { type: 'RecordItems', data: { items: body.data.map((i) => toRecord(i, serverTime)) } });
      res.status(204).end();
    });

    mountRoute(router, api.positions, async ({ query }, _req, res) => {
      const answer = await positions(model, userIdOf(res), query);
      res.setHeader('sync-token', answer.syncToken).json(answer.positions);
    });
  }

  mountRoute(router, historyApi.deleteByItemId, async ({ params }, _req, res) => {
    await execute(userIdOf(res), { type: 'DeleteItem', data: { itemId: params.itemId } });
    res.status(204).end();
  });

  /** Deprecated: delete by technical id, unversioned path only. */
  mountRoute(router, historyApi.deleteById, async ({ params }, _req, res) => {
    await execute(userIdOf(res), { type: 'DeleteItemById', data: { id: params.id } });
    res.status(204).end();
  });

  return router;
}
