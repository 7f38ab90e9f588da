import { Router, type Request, type Response } from 'express';
import {
  HistoryItemBatch,
  HistoryItemIdParam,
  HistoryQuery,
  HistoryTechnicalIdParam,
  NewItem,
  PositionsQuery,
  type NewItem as NewItemBody,
} from '@udp/contracts';
import { type Snapshotting, type StreamStateCache, type Unstamped, type WriteSide, handleCommandVisibly } from '@udp/eventsourcing';
import { StoreUnavailableError } from '@udp/eventstore';
import { parseInput, userIdOf, sendJsonTextConditionally } from '@udp/http-kit';
import { type HistoryCommand, type HistoryState, type ItemToRecord, historyDecider } from '../domain/decider';
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
  now: () => number;
}

/** HTTP <-> commands and queries. History never retries a conflicting append: the spec answers 429. */
export function historyRoutes({ write, states, snapshots, model, now }: HistoryRouteDeps): Router {
  const router = Router();
  const execute = (userId: string, command: Unstamped<HistoryCommand>) =>
    handleCommandVisibly(
      write,
      historyStream(userId),
      historyDecider,
      { ...command, metadata: { now: now() } },
      { retries: 0, cache: states, snapshots },
    );

  const toRecord = (item: NewItemBody, serverTime: number): ItemToRecord => ({
    itemId: item.item_id,
    date: item.date ?? serverTime,
    deleted: item.deleted,
    deviceId: item.device_id,
    lastPlaybackPosition: item.last_playback_position,
  });

  const list = async (req: Request, res: Response) => {
    const query = parseInput(HistoryQuery, req.query, 'query');
    const page = await listHistory(model, userIdOf(res), query);
    // The same version of the history and the same (parsed) query answer the same bytes.
    const version = page.version === undefined ? undefined : `${page.version} ${JSON.stringify(query)}`;
    sendJsonTextConditionally(req, res, () => historyJson(page), version);
  };

  const add = async (req: Request, res: Response) => {
    const body = parseInput(NewItem, req.body, 'body');
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
  };

  const addBatch = async (req: Request, res: Response) => {
    const body = parseInput(HistoryItemBatch, req.body, 'body');
    const serverTime = now();
    await execute(userIdOf(res), { type: 'RecordItems', data: { items: body.data.map((i) => toRecord(i, serverTime)) } });
    res.status(204).end();
  };

  const clear = async (_req: Request, res: Response) => {
    await execute(userIdOf(res), { type: 'ClearHistory', data: {} });
    res.status(204).end();
  };

  const readPositions = async (req: Request, res: Response) => {
    const query = parseInput(PositionsQuery, req.query, 'query');
    const answer = await positions(model, userIdOf(res), query);
    res.setHeader('sync-token', answer.syncToken).json(answer.positions);
  };

  for (const base of ['/api/history/v2', '/api/history']) {
    router.get(base, list);
    router.post(base, add);
    router.delete(base, clear);
    router.post(`${base}/batch`, addBatch);
    router.get(`${base}/positions`, readPositions);
  }

  router.delete('/api/history/v2/:itemId', async (req, res) => {
    const { itemId } = parseInput(HistoryItemIdParam, req.params, 'path');
    await execute(userIdOf(res), { type: 'DeleteItem', data: { itemId } });
    res.status(204).end();
  });

  /** Deprecated: delete by technical id, unversioned path only. */
  router.delete('/api/history/:id', async (req, res) => {
    const { id } = parseInput(HistoryTechnicalIdParam, req.params, 'path');
    await execute(userIdOf(res), { type: 'DeleteItemById', data: { id } });
    res.status(204).end();
  });

  return router;
}
