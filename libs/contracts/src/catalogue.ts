import { z } from './zod';
import { defineRoute } from './routes/define-route';
import { problem } from './routes/helpers';

/**
 * The QC item catalogue (spec: qc-catalogue-api.md). Two shapes: the item definition as stored in
 * `ItemVersionPublished` events and in apps/catalogue-svc/data/items.json, and the JSON rendition the API
 * serves next to the XML one (field names of the spec's section 2).
 */

/** Four digits then the layer letters (F, W, X, B, BI observed). */
export const QC_ITEM_ID = /^\d{4}[A-Z]{1,3}$/;
/** MAJOR.MINOR[.PATCH], as EBUQCVersionType. */
export const QC_VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)(\.(0|[1-9]\d*))?$/;
/** Parameter names are EBUQCIDType tokens: letters, digits and dashes. */
export const QC_PARAMETER_NAME = /^[0-9a-zA-Z-]+$/;
/** A version as written in a URL: dots become dashes (5.0 -> 5-0). */
export const QC_URL_VERSION = /^(0|[1-9]\d*)-(0|[1-9]\d*)(-(0|[1-9]\d*))?$/;

const Cardinality = z.enum(['required', 'optional', 'not applicable']);
const nonEmpty = z.string().min(1);

export const QcParameter = z.object({
  Name: z.string().regex(QC_PARAMETER_NAME, 'letters, digits and dashes only'),
  Description: nonEmpty,
  Remarks: z.string().optional(),
  HasLocator: z.boolean(),
  InReports: Cardinality,
  InChecks: Cardinality,
  // Value elements: absent rather than empty (spec rule 2).
  DefaultValue: nonEmpty.optional(),
  ValueRange: nonEmpty.optional(),
  Type: nonEmpty.optional(),
  Unit: nonEmpty.optional(),
  Representation: nonEmpty.optional(),
});
export type QcParameter = z.infer<typeof QcParameter>;

export const QcReference = z.object({ URI: z.string().min(1).optional(), Name: nonEmpty, Remark: z.string().optional() });
export type QcReference = z.infer<typeof QcReference>;

export const QcTextExample = z.object({ Contents: z.string(), Remark: z.string().optional() });
export type QcTextExample = z.infer<typeof QcTextExample>;

/** One version of a QC item as we publish it, with its provenance. */
export const QcItemDefinition = z.object({
  ID: z.string().regex(QC_ITEM_ID, 'four digits followed by layer letters'),
  Name: nonEmpty,
  Version: z.string().regex(QC_VERSION, 'MAJOR.MINOR[.PATCH]'),
  Status: nonEmpty,
  UsableAs: z.array(z.enum(['check', 'report'])).min(1),
  Description: z.string().optional(),
  Definition: z.string(),
  Remarks: z.string().optional(),
  Layer: z.enum(['bitstream', 'wrapper', 'crosscheck', 'baseband']),
  Category: nonEmpty,
  EssenceType: nonEmpty,
  Aliases: z.array(z.string()),
  Tags: z.array(z.string()),
  References: z.array(QcReference),
  TextExamples: z.array(QcTextExample),
  InputParameters: z.array(QcParameter),
  OutputParameters: z.array(QcParameter),
  /** Where the record came from (the public item page). */
  Source: nonEmpty,
  /** Fields we completed because the public page did not show them (see docs/catalogue-svc.md). */
  Completed: z.array(z.string()),
});
export type QcItemDefinition = z.infer<typeof QcItemDefinition>;

export const ItemVersionPublished = z.object({
  type: z.literal('ItemVersionPublished'),
  data: z.object({ item: QcItemDefinition, publishedAt: z.number().int() }),
});
export const CatalogueEvent = z.discriminatedUnion('type', [ItemVersionPublished]);
export type CatalogueEvent = z.infer<typeof CatalogueEvent>;

// ---- JSON rendition (Accept: application/json) ----

export const QcParameterJson = z
  .object({
    Name: z.string(),
    Description: z.string(),
    Remarks: z.string(),
    HasLocator: z.enum(['true', 'false']),
    InReports: Cardinality,
    InChecks: Cardinality,
    DefaultValue: z.string().optional(),
    ValueRange: z.string().optional(),
    Type: z.string().optional(),
    Unit: z.string().optional(),
    Representation: z.string().optional(),
  })
  .openapi('QcParameter', { description: 'Value fields are left out when they have no value (never empty).' });

export const QcItemJson = z
  .object({
    ID: z.string().openapi({ example: '0001W' }),
    Name: z.string(),
    Version: z.string().openapi({ example: '5.0' }),
    Versions: z.array(z.string()).openapi({ description: 'every published version of the item, oldest first' }),
    Status: z.string(),
    UsableAs: z.string().openapi({ example: 'check report' }),
    Description: z.string(),
    Definition: z.string(),
    Remarks: z.string(),
    Layer: z.string(),
    Category: z.string(),
    EssenceType: z.string(),
    Aliases: z.array(z.string()),
    Tags: z.array(z.string()),
    References: z.array(z.object({ URI: z.string().nullable(), Name: z.string(), Remark: z.string() })),
    TextExamples: z.array(z.object({ Contents: z.string(), Remark: z.string() })),
    InputParameters: z.array(QcParameterJson),
    OutputParameters: z.array(QcParameterJson),
    Source: z.string(),
    Completed: z.array(z.string()),
  })
  .openapi('QcItem');
export type QcItemJson = z.infer<typeof QcItemJson>;

export const QcItemsJson = z.object({ Items: z.array(QcItemJson) }).openapi('QcItems');
export type QcItemsJson = z.infer<typeof QcItemsJson>;

// ---- routes --------------------------------------------------------------------------------------------------

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
