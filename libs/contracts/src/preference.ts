import { z } from './zod';
import { defineRoute } from './routes/define-route';
import { commonErrors, empty, json, problem, quotaExceeded, writeErrors } from './routes/helpers';

/**
 * preference-svc's contract: the schemas of its requests and answers, then its route table (`preferenceApi`).
 * Its events: events/preference.ts.
 */

/**
 * Limits of the preference API and their defaults; preference-svc reads the configured values from
 * PREFERENCE_MAX_DOCUMENT_BYTES, PREFERENCE_MAX_KEY_LENGTH, PREFERENCE_MAX_PATH_DEPTH,
 * PREFERENCE_MAX_JSONPATH_STEPS, PREFERENCE_MAX_JSONPATH_RESULT_BYTES (docs/preference-svc.md). The
 * expression's own limits (length, descendant segments, union members) are fixed: they are part of the API.
 */
export const PREFERENCE_LIMITS = {
  maxDocumentBytes: 256 * 1024,
  maxKeyLength: 256,
  maxPathDepth: 32,
  maxJsonPathLength: 1024,
  /** `..` segments in one expression. */
  maxJsonPathDescendants: 8,
  /** Indexes in one union `[i,j,...]`. */
  maxJsonPathUnionMembers: 32,
  /** Steps of one evaluation (nodes visited, duplicates included), counted before it runs: about 30 ms. */
  maxJsonPathSteps: 100_000,
  /** Bytes of a GET's JSONPath answer (JSON text, about). */
  maxJsonPathResultBytes: 4 * 1024 * 1024,
  /** Per-user quota: live keys (PREFERENCE_MAX_KEYS). */
  maxKeys: 256,
  /** Per-user quota: bytes of all the user's documents together (PREFERENCE_MAX_USER_BYTES): 16 documents at the largest. */
  maxUserBytes: 4 * 1024 * 1024,
} as const;

/** Any JSON value: the content of a preference, or of a part of one. */
export const JsonNode = z.unknown().openapi('JsonNode', { description: 'any JSON value' });

/** A whole preference document: a JSON object at its root (an array or a scalar is refused). */
export const PreferenceDocument = z
  .custom<Record<string, unknown>>((v) => v !== null && typeof v === 'object' && !Array.isArray(v), {
    message: 'a preference document must be a JSON object at its root',
  })
  .openapi('PreferenceDocument', { type: 'object', additionalProperties: true, description: 'a JSON object' });
export type PreferenceDocument = z.infer<typeof PreferenceDocument>;

/** Body of POST `/api/preference/{key}/{path}`: the `payload` key is required (its value may be null). */
export const PartialUpdate = z
  .object({
    payload: z
      .unknown()
      .refine((v) => v !== undefined, 'payload is required')
      .openapi({ description: 'new value for the part under the path' }),
  })
  .openapi('PartialUpdate');
export type PartialUpdate = z.infer<typeof PartialUpdate>;

export const PreferenceKeys = z.array(z.string()).openapi('PreferenceKeys', { description: 'the keys of the user, in ascending order' });
export type PreferenceKeys = z.infer<typeof PreferenceKeys>;

/**
 * The JSONPath expressions the API evaluates, as one regular expression (so the OpenAPI document states it):
 * `$` then segments: `.name`, `.*`, `..name`, `..*`, `..[...]`, and brackets holding an index, `*`, a quoted
 * name, a slice `start:end:step`, or a union of indexes. Filters (`[?...]`) and scripts (`[(...)]`) are
 * refused, so no expression can run code; anything else malformed (`$[`) is refused instead of being
 * half-read. Quoted names hold no quote, bracket, backslash or comma (the evaluator cannot read them).
 */
const NAME = '[A-Za-z0-9_\\-\\u00C0-\\uD7FF\\uE000-\\uFFFD]+';
const QUOTED_CHARS = '[^\'"\\[\\]\\\\,;~^@%#()?`*\\u0000-\\u001f]*';
const QUOTED = `(?:'${QUOTED_CHARS}'|"${QUOTED_CHARS}")`;
const INDEX = '-?[0-9]{1,9}';
const SLICE = `(?:${INDEX})?:(?:${INDEX})?(?::(?:${INDEX})?)?`;
const UNION = `${INDEX}(?:,${INDEX}){0,${PREFERENCE_LIMITS.maxJsonPathUnionMembers - 1}}`;
const bracket = (union: string) => `\\[(?:${QUOTED}|${SLICE}|\\*|${union})\\]`;
const child = (union: string) => `\\.(?:${NAME}|\\*)|${bracket(union)}`;
const descendant = (union: string) => `\\.\\.(?:${NAME}|\\*|${bracket(union)})`;
/** The grammar, whatever the counts: tells an expression over a limit from one that is not JSONPath at all. */
const JSONPATH_GRAMMAR = new RegExp(`^\\$(?:${child(`${INDEX}(?:,${INDEX})*`)}|${descendant(`${INDEX}(?:,${INDEX})*`)})*$`);
/**
 * The grammar with its limits (descendant segments, indexes in a union) in the pattern itself, so the OpenAPI
 * document states every rule the code applies: any child segments, then at most `maxJsonPathDescendants`
 * descendant segments, each followed by any child segments.
 */
export const JSONPATH_PATTERN = new RegExp(
  `^\\$(?:${child(UNION)})*(?:${descendant(UNION)}(?:${child(UNION)})*){0,${PREFERENCE_LIMITS.maxJsonPathDescendants}}$`,
);

/** The expression without its quoted names (which may hold `..` or digits): what the counts below look at. */
const unquoted = (expression: string) => expression.replace(/'[^']*'|"[^"]*"/g, "''");
const descendantSegments = (expression: string) => unquoted(expression).split('..').length - 1;

/** Why an expression does not match the pattern, in the words a client can act on. */
function jsonPathProblem(expression: string): string {
  if (/\[\s*[?(]/.test(expression)) return 'filter and script expressions are not supported';
  if (!JSONPATH_GRAMMAR.test(expression)) {
    return "invalid expression (supported: $, .name, .*, ..name, [index], [*], ['name'], [start:end:step], [i,j])";
  }
  if (descendantSegments(expression) > PREFERENCE_LIMITS.maxJsonPathDescendants) {
    return `at most ${PREFERENCE_LIMITS.maxJsonPathDescendants} descendant (..) segments`;
  }
  return `at most ${PREFERENCE_LIMITS.maxJsonPathUnionMembers} indexes in a union [i,j,...]`;
}

// Each `..` and each union member multiplies the work of an evaluation; the evaluation has its own budget too.
export const JsonPathExpression = z
  .string()
  .max(PREFERENCE_LIMITS.maxJsonPathLength, { error: `jsonpath is at most ${PREFERENCE_LIMITS.maxJsonPathLength} characters`, abort: true })
  .regex(JSONPATH_PATTERN, { error: (issue) => jsonPathProblem(String(issue.input)) });

export const PreferenceQuery = z
  .object({
    jsonpath: JsonPathExpression.optional().openapi({
      description:
        "JSONPath expression ($, .name, .*, ..name, [index], [*], ['name'], [start:end:step], [i,j]; no filter or script expressions); ignored when a {path} is given. " +
        `At most ${PREFERENCE_LIMITS.maxJsonPathDescendants} descendant (..) segments and ${PREFERENCE_LIMITS.maxJsonPathUnionMembers} indexes in a union; ` +
        `an evaluation that would visit more than PREFERENCE_MAX_JSONPATH_STEPS (default ${PREFERENCE_LIMITS.maxJsonPathSteps}) nodes, ` +
        `or answer more than PREFERENCE_MAX_JSONPATH_RESULT_BYTES (default ${PREFERENCE_LIMITS.maxJsonPathResultBytes}), is a 400 naming the limit`,
    }),
  })
  .openapi('PreferenceQuery');
export type PreferenceQuery = z.infer<typeof PreferenceQuery>;

// ---- routes --------------------------------------------------------------------------------------------------

const tags = ['preference'];
const key = z.object({ key: z.string().openapi({ description: 'preference key (URL-encoded; any characters)' }) });
const keyAndPath = key.extend({
  path: z.string().openapi({ description: 'field names and array indexes separated by slashes, e.g. favorites/urn:show:1/date' }),
});
const notFound = { 404: problem('no such preference, or nothing at that path') };
const conflict = { 429: problem('the document kept changing under concurrent writes; see Retry-After') };
const tooLarge = { 413: problem('body, or the resulting document, too large') };
const quota = quotaExceeded(
  `by default ${PREFERENCE_LIMITS.maxKeys} keys per user (PREFERENCE_MAX_KEYS) and ${PREFERENCE_LIMITS.maxUserBytes} bytes of all documents together (PREFERENCE_MAX_USER_BYTES)`,
);
/** What a write under a path answers: the value now there. */
const writtenAtPath = {
  200: json(JsonNode, 'the value now at the path'),
  201: json(JsonNode, 'the document was created: the value now at the path'),
  ...writeErrors,
  ...tooLarge,
  ...quota,
  ...conflict,
};

/** preference-svc: `/api/preference`, a JSON document per key; `{path}` runs to the end of the URL. */
export const preferenceApi = {
  listKeys: defineRoute({
    operationId: 'listPreferenceKeys',
    method: 'get',
    path: '/api/preference',
    tags,
    summary: 'List the keys of the user',
    responses: { 200: json(PreferenceKeys, 'the keys, ascending'), ...commonErrors },
  }),
  read: defineRoute({
    operationId: 'getPreference',
    method: 'get',
    path: '/api/preference/{key}',
    tags,
    summary: 'Read a preference, optionally through a JSONPath expression',
    description:
      'A definite expression (plain names and indexes) answers the value (404 when absent); any other answers the array of matches.',
    request: { params: key, query: PreferenceQuery },
    responses: { 200: json(JsonNode, 'the document, or the JSONPath result'), ...commonErrors, ...notFound },
  }),
  replace: defineRoute({
    operationId: 'replacePreference',
    method: 'put',
    path: '/api/preference/{key}',
    tags,
    summary: 'Create or replace a preference (a JSON object)',
    request: { params: key, body: PreferenceDocument },
    responses: {
      200: json(PreferenceDocument, 'replaced: the stored document'),
      201: json(PreferenceDocument, 'created: the stored document'),
      ...writeErrors,
      ...tooLarge,
      ...quota,
      ...conflict,
    },
  }),
  delete: defineRoute({
    operationId: 'deletePreference',
    method: 'delete',
    path: '/api/preference/{key}',
    tags,
    summary: 'Delete a preference, or with `jsonpath` the matching parts of it',
    request: { params: key, query: PreferenceQuery },
    responses: { 204: empty('deleted'), ...commonErrors, ...notFound, ...conflict },
  }),
  readAtPath: defineRoute({
    operationId: 'getPreferenceAtPath',
    method: 'get',
    path: '/api/preference/{key}/{path}',
    restParam: 'path',
    tags,
    summary: 'Read the part under a path',
    request: { params: keyAndPath },
    responses: { 200: json(JsonNode, 'the value at the path'), ...commonErrors, ...notFound },
  }),
  mergeAtPath: defineRoute({
    operationId: 'mergePreferenceAtPath',
    method: 'post',
    path: '/api/preference/{key}/{path}',
    restParam: 'path',
    tags,
    summary: 'Update the part under a path (objects are merged)',
    description:
      'Creates the document and missing parents. When both the stored value and the payload are objects, the payload is merged into it recursively; otherwise it replaces it.',
    request: { params: keyAndPath, body: PartialUpdate },
    responses: writtenAtPath,
  }),
  replaceAtPath: defineRoute({
    operationId: 'replacePreferenceAtPath',
    method: 'put',
    path: '/api/preference/{key}/{path}',
    restParam: 'path',
    tags,
    summary: 'Replace the part under a path',
    description: 'Creates the document and missing parents (as objects).',
    request: { params: keyAndPath, body: JsonNode },
    responses: writtenAtPath,
  }),
  deleteAtPath: defineRoute({
    operationId: 'deletePreferenceAtPath',
    method: 'delete',
    path: '/api/preference/{key}/{path}',
    restParam: 'path',
    tags,
    summary: 'Delete the part under a path',
    request: { params: keyAndPath },
    responses: { 204: empty('deleted'), ...commonErrors, ...notFound, ...conflict },
  }),
};
