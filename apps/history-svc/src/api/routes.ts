import { Router, type Request, type Response } from 'express';
import {
  HistoryItemBatch, HistoryItemIdParam, HistoryQuery, HistoryTechnicalIdParam, NewItem, PositionsQuery,
  type NewItem as NewItemBody,
} from '@udp/contracts';
import { type StreamStateCache, handleCommandVisibly, type WriteSide } from '@udp/eventsourcing';
import { parseInput, userIdOf } from '@udp/http-kit';
import type { Collection } from '@udp/readmodel';
import { type HistoryCommand, type ItemToRecord, historyDecider } from '../domain/decider';
import { historyStreamId } from '../domain/events';
import { type HistoryEntryDocument, entryDocumentId } from '../projections/history';
import { listHistory, positions, toItem } from '../projections/history-queries';

export interface HistoryRouteDeps {
  write: WriteSide;
  /** Folded histories by user, so a write reads only what is new (the history decider never mutates a state). */
  states: StreamStateCache<unknown>;
  entries: Collection<HistoryEntryDocument>;
  now: () => number;
}

/** HTTP <-> commands and queries. History never retries a conflicting append: the spec answers 429. */
export function historyRoutes({ write, states, entries, now }: HistoryRouteDeps): Router {
  const router = Router();
  const execute = (userId: string, command: Omit<HistoryCommand, 'metadata'>) =>
    handleCommandVisibly(write, historyStreamId(userId), historyDecider, { ...command, metadata: { now: now() } } as HistoryCommand, { retries: 0, cache: states });

  const toRecord = (item: NewItemBody, serverTime: number): ItemToRecord => ({
    itemId: item.item_id,
    date: item.date ?? serverTime,
    deleted: item.deleted,
    deviceId: item.device_id,
    lastPlaybackPosition: item.last_playback_position,
  });

  const list = async (req: Request, res: Response) => {
    const query = parseInput(HistoryQuery, req.query, 'query');
    res.json(await listHistory(entries, userIdOf(res), query));
  };

  const add = async (req: Request, res: Response) => {
    const body = parseInput(NewItem, req.body, 'body');
    const userId = userIdOf(res);
    await execute(userId, { type: 'RecordItems', data: { items: [toRecord(body, now())] } });
    // The stored entry: the new one, or the newer one that was kept.
    const stored = await entries.get(entryDocumentId(userId, body.item_id));
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
    res.json(await positions(entries, userIdOf(res), query));
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

