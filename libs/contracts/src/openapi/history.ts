import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
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
import { commonErrors, empty, json, problem, writeErrors } from './helpers';

export function registerHistory(registry: OpenAPIRegistry): void {
  const conflict = { 429: problem('another request is updating this history; see Retry-After') };
  for (const base of ['/api/history', '/api/history/v2']) {
    const tags = ['history'];
    registry.registerPath({
      method: 'get',
      path: base,
      tags,
      summary: 'List the history, newest first',
      request: { query: HistoryQuery },
      responses: { 200: json(History, 'the selected part of the history'), ...commonErrors },
    });
    registry.registerPath({
      method: 'post',
      path: base,
      tags,
      summary: 'Add or update an item (newest date wins)',
      request: { body: { required: true, content: { 'application/json': { schema: NewItem } } } },
      responses: { 200: json(Item, 'the stored item'), ...writeErrors, ...conflict },
    });
    registry.registerPath({
      method: 'delete',
      path: base,
      tags,
      summary: 'Delete the whole history (tombstones)',
      responses: { 204: empty('deleted'), ...commonErrors, ...conflict },
    });
    registry.registerPath({
      method: 'post',
      path: `${base}/batch`,
      tags,
      summary: 'Add or update several items atomically',
      request: { body: { required: true, content: { 'application/json': { schema: HistoryItemBatch } } } },
      responses: { 204: empty('stored'), ...writeErrors, ...conflict },
    });
    registry.registerPath({
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
    });
  }
  registry.registerPath({
    method: 'delete',
    path: '/api/history/v2/{itemId}',
    tags: ['history'],
    summary: 'Delete one item by its business id',
    request: { params: HistoryItemIdParam },
    responses: { 204: empty('deleted'), 404: problem('no such item'), ...commonErrors, ...conflict },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/history/{id}',
    tags: ['history'],
    summary: 'Delete one item by technical id',
    deprecated: true,
    request: { params: HistoryTechnicalIdParam },
    responses: { 204: empty('deleted'), 404: problem('no such item'), ...commonErrors, ...conflict },
  });
}
