import { Router, type NextFunction, type Request, type Response } from 'express';
import { preferenceApi } from '@udp/contracts';
import { DomainError, handleCommandVisibly, invalid, notFound, type WriteSide, type Unstamped } from '@udp/eventsourcing';
import { HttpError, badRequest, mountRoute, userIdOf } from '@udp/http-kit';
import type { Collection } from '@udp/readmodel';
import { type PreferenceCommand, type PreferenceQuotas, type PreferenceState, evolve, preferenceDecider } from '../domain/decider';
import { preferenceStream } from '../domain/events';
import { type DocumentLimits, checkKey, getAt, parsePath, queryJsonPath } from '../domain/json-document';
import { listKeys, otherKeysUsage, readDocument } from '../projections/preference-queries';
import type { PreferenceDocumentRow, PreferenceKeyRow } from '../projections/preferences';

export interface PreferenceRouteDeps {
  write: WriteSide;
  documents: Collection<PreferenceDocumentRow>;
  keys: Collection<PreferenceKeyRow>;
  limits: DocumentLimits & PreferenceQuotas;
  /** How many times a write that lost a race is re-read and re-applied before answering 429. */
  writeRetries: number;
  now: () => number;
}

const BASE = '/api/preference';

/** HTTP <-> commands and queries for `/api/preference`. */
export function preferenceRoutes({ write, documents, keys, limits, writeRetries, now }: PreferenceRouteDeps): Router {
  const router = Router();
  const decider = preferenceDecider(limits);

  /** Runs a command; a conflicting append is re-read and re-decided (docs/architecture.md, "Concurrency"), then 429. */
  const execute = async (userId: string, command: Unstamped<PreferenceCommand>) => {
    try {
      const result = await handleCommandVisibly(
        write,
        preferenceStream(userId, command.data.key),
        decider,
        { ...command, metadata: { now: now() } },
        { retries: writeRetries },
      );
      const after: PreferenceState = result.events.reduce(evolve, result.stateBefore);
      return { created: result.stateBefore.document === null, document: after.document };
    } catch (error) {
      // The only limit that is about size rather than shape: the resulting document.
      if (error instanceof DomainError && error.kind === 'LimitExceeded' && error.field === 'document') {
        throw new HttpError(413, 'Content Too Large', error.message);
      }
      throw error;
    }
  };

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
    const userId = userIdOf(res);
    const usage = await otherKeysUsage(keys, documents, userId, key);
    const result = await execute(userId, { type: 'ReplaceDocument', data: { key, document, usage } });
    res.status(result.created ? 201 : 200).json(result.document);
  });

  mountRoute(router, preferenceApi.delete, async ({ params, query: { jsonpath } }, _req, res) => {
    const key = checkedKey(params.key);
    await execute(
      userIdOf(res),
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
    const userId = userIdOf(res);
    const usage = await otherKeysUsage(keys, documents, userId, key);
    const result = await execute(userId, { type, data: { key, path, value, usage } });
    const stored = result.document ? getAt(result.document, path) : { found: false as const };
    res.status(result.created ? 201 : 200).json(stored.found ? stored.value : null);
  };
  mountRoute(router, preferenceApi.replaceAtPath, async ({ params, body }, req, res) => {
    await writeAtPath('PutAtPath', checkedKey(params.key), jsonBody(body), req, res);
  });
  mountRoute(router, preferenceApi.mergeAtPath, async ({ params, body }, req, res) => {
    await writeAtPath('MergeAtPath', checkedKey(params.key), body.payload, req, res);
  });

  mountRoute(router, preferenceApi.deleteAtPath, async ({ params }, req, res) => {
    const key = checkedKey(params.key);
    await execute(userIdOf(res), { type: 'DeleteAtPath', data: { key, path: pathOf(req) } });
    res.status(204).end();
  });

  return router;
}
