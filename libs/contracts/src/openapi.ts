import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { ProblemDetails } from './common';
import { History, HistoryItemBatch, HistoryQuery, Item, NewItem, Positions, PositionsQuery } from './history';
import { z } from './zod';

const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemDetails } } });
const commonErrors = {
  400: problem('invalid input; `errors` names each offending field'),
  401: problem('missing or invalid credentials'),
  403: problem('forbidden'),
};
const writeErrors = { ...commonErrors, 413: problem('body too large'), 415: problem('body is not JSON') };
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { 'application/json': { schema } } });
const empty = (description: string) => ({ description });

function registerHistory(registry: OpenAPIRegistry): void {
  const conflict = { 429: problem('another request is updating this history; see Retry-After') };
  for (const base of ['/api/history', '/api/history/v2']) {
    const tags = ['history'];
    registry.registerPath({
      method: 'get', path: base, tags, summary: 'List the history, newest first',
      request: { query: HistoryQuery }, responses: { 200: json(History, 'the selected part of the history'), ...commonErrors },
    });
    registry.registerPath({
      method: 'post', path: base, tags, summary: 'Add or update an item (newest date wins)',
      request: { body: { required: true, content: { 'application/json': { schema: NewItem } } } },
      responses: { 200: json(Item, 'the stored item'), ...writeErrors, ...conflict },
    });
    registry.registerPath({ method: 'delete', path: base, tags, summary: 'Delete the whole history (tombstones)', responses: { 204: empty('deleted'), ...commonErrors, ...conflict } });
    registry.registerPath({
      method: 'post', path: `${base}/batch`, tags, summary: 'Add or update several items atomically',
      request: { body: { required: true, content: { 'application/json': { schema: HistoryItemBatch } } } },
      responses: { 204: empty('stored'), ...writeErrors, ...conflict },
    });
    registry.registerPath({
      method: 'get', path: `${base}/positions`, tags, summary: 'Last playback positions by item id',
      request: { query: PositionsQuery }, responses: { 200: json(Positions, 'item id -> position (s)'), ...commonErrors },
    });
  }
  registry.registerPath({
    method: 'delete', path: '/api/history/v2/{itemId}', tags: ['history'], summary: 'Delete one item by its business id',
    request: { params: z.object({ itemId: z.string() }) },
    responses: { 204: empty('deleted'), 404: problem('no such item'), ...commonErrors, ...conflict },
  });
  registry.registerPath({
    method: 'delete', path: '/api/history/{id}', tags: ['history'], summary: 'Delete one item by technical id', deprecated: true,
    request: { params: z.object({ id: z.string().openapi({ description: 'int32 technical id' }) }) },
    responses: { 204: empty('deleted'), 404: problem('no such item'), ...commonErrors, ...conflict },
  });
}

function registerHealth(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get', path: '/health/', tags: ['health'], summary: 'Liveness of the API and its stores', security: [],
    responses: { 200: { description: 'UP', content: { 'text/plain': { schema: z.string() } } }, 503: { description: 'a store does not answer' } },
  });
}

/** The published OpenAPI 3.1 document, generated from the same schemas that validate requests. */
export function buildOpenApiDocument(): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  registry.registerComponent('securitySchemes', 'sessionToken', {
    type: 'apiKey', in: 'header', name: 'Authorization', description: '`sessionToken <token>`, as the mobile apps send it',
  });
  registerHealth(registry);
  registerHistory(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'User-data platform', version: '3.0.0', description: 'History, playlists, preferences, profile and exports of a media app user.' },
    security: [{ bearer: [] }, { sessionToken: [] }],
  });
}
