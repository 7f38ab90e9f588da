import {
  HISTORY_LIMITS,
  History,
  HistoryItemBatch,
  HistoryItemIdParam,
  HistoryQuery,
  HistoryTechnicalIdParam,
  Item,
  NewItem,
  Positions,
  PositionsQuery,
} from '../history';
import { defineRoute } from './define-route';
import { commonErrors, empty, json, problem, quotaExceeded, writeErrors } from './helpers';

const tags = ['history'];
const conflict = { 429: problem('another request is updating this history; see Retry-After') };
const quota = quotaExceeded(`by default ${HISTORY_LIMITS.maxEntries} entries per user, deleted ones included (HISTORY_MAX_ENTRIES)`);

/** The operations served the same at `/api/history` and `/api/history/v2`; `v` tells their operationIds apart. */
const historyAt = (base: '/api/history' | '/api/history/v2', v: '' | 'V2') => ({
  list: defineRoute({
    operationId: `listHistory${v}`,
    method: 'get',
    path: base,
    tags,
    summary: 'List the history, newest first',
    request: { query: HistoryQuery },
    responses: { 200: json(History, 'the selected part of the history'), ...commonErrors },
  }),
  add: defineRoute({
    operationId: `addHistoryItem${v}`,
    method: 'post',
    path: base,
    tags,
    summary: 'Add or update an item (newest date wins)',
    request: { body: NewItem },
    responses: { 200: json(Item, 'the stored item'), ...writeErrors, ...quota, ...conflict },
  }),
  clear: defineRoute({
    operationId: `clearHistory${v}`,
    method: 'delete',
    path: base,
    tags,
    summary: 'Delete the whole history (tombstones)',
    responses: { 204: empty('deleted'), ...commonErrors, ...conflict },
  }),
  addBatch: defineRoute({
    operationId: `addHistoryItems${v}`,
    method: 'post',
    path: `${base}/batch`,
    tags,
    summary: 'Add or update several items atomically',
    request: { body: HistoryItemBatch },
    responses: { 204: empty('stored'), ...writeErrors, ...quota, ...conflict },
  }),
  positions: defineRoute({
    operationId: `getPlaybackPositions${v}`,
    method: 'get',
    path: `${base}/positions`,
    tags,
    summary: 'Last playback positions by item id',
    request: { query: PositionsQuery },
    responses: {
      200: {
        ...json(Positions, 'item id -> position (s)'),
        headers: {
          'Sync-Token': {
            description: 'the sync_token of this answer (it cannot travel in the map): pass it as since= later',
            schema: { type: 'string' },
          },
        },
      },
      ...commonErrors,
    },
  }),
});

/** history-svc: `/api/history` (the first API) and `/api/history/v2`. */
export const historyApi = {
  unversioned: historyAt('/api/history', ''),
  v2: historyAt('/api/history/v2', 'V2'),
  deleteByItemId: defineRoute({
    operationId: 'deleteHistoryItemV2',
    method: 'delete',
    path: '/api/history/v2/{itemId}',
    tags,
    summary: 'Delete one item by its business id',
    request: { params: HistoryItemIdParam },
    responses: { 204: empty('deleted'), 404: problem('no such item'), ...commonErrors, ...conflict },
  }),
  deleteById: defineRoute({
    operationId: 'deleteHistoryItemById',
    method: 'delete',
    path: '/api/history/{id}',
    tags,
    summary: 'Delete one item by technical id',
    deprecated: true,
    request: { params: HistoryTechnicalIdParam },
    responses: { 204: empty('deleted'), 404: problem('no such item'), ...commonErrors, ...conflict },
  }),
};
