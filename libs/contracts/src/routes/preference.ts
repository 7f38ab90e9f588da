import { JsonNode, PREFERENCE_LIMITS, PartialUpdate, PreferenceDocument, PreferenceKeys, PreferenceQuery } from '../preference';
import { z } from '../zod';
import { defineRoute } from './define-route';
import { commonErrors, empty, json, problem, quotaExceeded, writeErrors } from './helpers';

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
