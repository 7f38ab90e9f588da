import { Router, type NextFunction, type Request, type Response } from 'express';
import { preferenceApi } from '@udp/contracts';
import { type CommandHandler, type CommandResult, invalid, notFound } from '@udp/eventsourcing';
import { badRequest, mountRoute, userIdOf } from '@udp/http-kit';
import type { Collection } from '@udp/readmodel';
import type { PreferenceCommand, PreferenceQuotas, PreferenceState } from '../domain/decider';
import type { PreferenceEvent, PreferenceId } from '../domain/aggregate';
import { type DocumentLimits, checkKey, getAt, parsePath, queryJsonPath } from '../domain/json-document';
import { listKeys, readDocument } from '../projections/preference-queries';
import type { PreferenceDocumentRow, PreferenceKeyRow } from '../projections/preferences';

export interface PreferenceRouteDeps {
  /** The preference aggregate's command handler (app.ts). */
  handle: CommandHandler<PreferenceCommand, PreferenceEvent, PreferenceState, PreferenceId>;
  documents: Collection<PreferenceDocumentRow>;
  keys: Collection<PreferenceKeyRow>;
  limits: DocumentLimits & PreferenceQuotas;
}

const BASE = '/api/preference';

/** A write made the document (201), or changed one that was there (200). */
const createdBy = ({ newEvents, newState }: CommandResult<PreferenceEvent, PreferenceState>) =>
  newEvents.length > 0 && newState.createdByLatestWrite;

/** HTTP <-> commands and queries for `/api/preference`. */
export function preferenceRoutes({ handle, documents, keys, limits }: PreferenceRouteDeps): Router {
  const router = Router();

  const checkedKey = (key: string) => {
    checkKey(key, limits);
    return key;
  };
  // Express gives the segments of `{path}` one by one (decoded), so a field name may hold an encoded slash.
  const pathOf = (req: Request) => parsePath(req.params.path as unknown as string[], limits);
  const jsonBody = (body: unknown) => {
    if (body === undefined) throw badRequest('a JSON body is required', [{ field: 'body', message: 'required' }]);
    return body;
  };

  /** `/api/preference/` and `/api/preference//x` name an empty key: say so instead of a bare 404. */
  router.use((req: Request, _res: Response, next: NextFunction) => {
    const emptyKey = req.path.startsWith(`${BASE}//`) || ((req.path === BASE || req.path === `${BASE}/`) && req.method !== 'GET');
    next(emptyKey ? invalid('key must not be empty', 'key') : undefined);
  });

  mountRoute(router, preferenceApi.listKeys, async (_input, _req, res) => {
    res.json(await listKeys(keys, userIdOf(res)));
  });

  mountRoute(router, preferenceApi.read, async ({ params, query: { jsonpath } }, _req, res) => {
    const key = checkedKey(params.key);
    const document = await readDocument(documents, userIdOf(res), key);
    if (!document) throw notFound(`no preference ${key}`);
    res.json(jsonpath === undefined ? document : queryJsonPath(document, jsonpath, limits));
  });

  mountRoute(router, preferenceApi.replace, async ({ params, body: document }, _req, res) => {
    const key = checkedKey(params.key);
    const written = await handle({ userId: userIdOf(res), key }, { type: 'ReplaceDocument', data: { key, document } });
    res.status(createdBy(written) ? 201 : 200).json(written.newState.document);
  });

  mountRoute(router, preferenceApi.delete, async ({ params, query: { jsonpath } }, _req, res) => {
    const key = checkedKey(params.key);
    await handle(
      { userId: userIdOf(res), key },
      jsonpath === undefined ? { type: 'DeleteDocument', data: { key } } : { type: 'DeleteMatching', data: { key, jsonpath } },
    );
    res.status(204).end();
  });

  // With a {path}, the jsonpath query parameter is ignored (spec).
  mountRoute(router, preferenceApi.readAtPath, async ({ params }, req, res) => {
    const key = checkedKey(params.key);
    const path = pathOf(req);
    const document = await readDocument(documents, userIdOf(res), key);
    const found = document ? getAt(document, path) : { found: false as const };
    if (!found.found) throw notFound(`no preference ${key} with a value at ${path.join('/')}`);
    res.json(found.value);
  });

  const writeAtPath = async (type: 'PutAtPath' | 'MergeAtPath', key: string, value: unknown, req: Request, res: Response) => {
    const path = pathOf(req);
    const written = await handle({ userId: userIdOf(res), key }, { type, data: { key, path, value } });
    const { document } = written.newState;
    const stored = document ? getAt(document, path) : { found: false as const };
    res.status(createdBy(written) ? 201 : 200).json(stored.found ? stored.value : null);
  };
  mountRoute(router, preferenceApi.replaceAtPath, async ({ params, body }, req, res) => {
    await writeAtPath('PutAtPath', checkedKey(params.key), jsonBody(body), req, res);
  });
  mountRoute(router, preferenceApi.mergeAtPath, async ({ params, body }, req, res) => {
    await writeAtPath('MergeAtPath', checkedKey(params.key), body.payload, req, res);
  });

  mountRoute(router, preferenceApi.deleteAtPath, async ({ params }, req, res) => {
    const key = checkedKey(params.key);
    await handle({ userId: userIdOf(res), key }, { type: 'DeleteAtPath', data: { key, path: pathOf(req) } });
    res.status(204).end();
  });

  return router;
}
