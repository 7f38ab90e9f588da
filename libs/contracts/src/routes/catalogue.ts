import { QcItemJson, QcItemsJson } from '../catalogue';
import { z } from '../zod';
import { defineRoute } from './define-route';
import { problem } from './helpers';

const xml = (description: string) => ({
  description,
  content: { 'application/xml': { schema: z.string().openapi({ description: 'EBU QC 2026-01 catalogue API XML' }) } },
});
const both = (jsonSchema: z.ZodType, description: string) => ({
  description: `${description}. XML (default, \`application/xml\` or \`text/xml\`) valid against the EBU QC 2026-01 catalogue API schema, or JSON on \`Accept: application/json\`. Strong ETag per representation; \`If-None-Match\` answers 304; br or gzip on request.`,
  content: { ...xml(description).content, 'application/json': { schema: jsonSchema } },
});
const errors = {
  404: problem('unknown or malformed item id or version'),
  406: problem('the Accept header asks for a type other than XML or JSON'),
};
const itemId = z.string().openapi({ example: '0001W', description: 'four digits followed by the layer letters (F, W, X, B, BI)' });
const tags = ['qc catalogue'];

/** catalogue-svc: the public, read-only QC item catalogue (no credentials). */
export const catalogueApi = {
  list: defineRoute({
    operationId: 'listQcItems',
    method: 'get',
    path: '/api/v2/items',
    tags,
    security: [],
    summary: 'Every item, latest published version (qcc:Items)',
    responses: { 200: both(QcItemsJson, 'the catalogue'), 304: { description: 'not modified' }, 406: errors[406] },
  }),
  item: defineRoute({
    operationId: 'getQcItem',
    method: 'get',
    path: '/api/v2/items/{id}',
    tags,
    security: [],
    summary: 'One item, latest published version (qcc:ItemInfo)',
    request: { params: z.object({ id: itemId }) },
    responses: { 200: both(QcItemJson, 'the item'), 304: { description: 'not modified' }, ...errors },
  }),
  itemVersion: defineRoute({
    operationId: 'getQcItemVersion',
    method: 'get',
    path: '/api/v2/items/{id}/versions/{version}',
    tags,
    security: [],
    summary: 'One published version of an item; immutable, cacheable for a year',
    request: {
      params: z.object({
        id: itemId,
        version: z.string().openapi({ example: '5-0', description: 'MAJOR-MINOR[-PATCH]: the version with dashes' }),
      }),
    },
    responses: {
      200: both(QcItemJson, 'that version; Versions lists the versions published up to it'),
      304: { description: 'not modified' },
      ...errors,
    },
  }),
};
