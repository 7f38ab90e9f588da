import { Router, type NextFunction, type Request, type Response } from 'express';
import { PartialUpdate, PreferenceDocument, PreferenceKeyParam, PreferenceQuery } from '@udp/contracts';
import { DomainError, handleCommandVisibly, invalid, notFound, type WriteSide, type Unstamped } from '@udp/eventsourcing';
import { HttpError, badRequest, parseInput, userIdOf } from '@udp/http-kit';
import type { Collection } from '@udp/readmodel';
import { type PreferenceCommand, type PreferenceState, evolve, preferenceDecider } from '../domain/decider';
import { preferenceStream } from '../domain/events';
import { type DocumentLimits, checkKey, getAt, parsePath, queryJsonPath } from '../domain/json-document';
import { listKeys, readDocument } from '../projections/preference-queries';
import type { PreferenceDocumentRow, PreferenceKeyRow } from '../projections/preferences';

export interface PreferenceRouteDeps {
  write: WriteSide;
  documents: Collection<PreferenceDocumentRow>;
  keys: Collection<PreferenceKeyRow>;
  limits: DocumentLimits;
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

  const keyOf = (req: Request) => {
    const { key } = parseInput(PreferenceKeyParam, req.params, 'path');
    checkKey(key, limits);
    return key;
  };
  const pathOf = (req: Request) => parsePath(req.params.path as unknown as string[], limits);
  const jsonBody = (req: Request) => {
    if (req.body === undefined) throw badRequest('a JSON body is required', [{ field: 'body', message: 'required' }]);
    return req.body as unknown;
  };

  /** `/api/preference/` and `/api/preference//x` name an empty key: say so instead of a bare 404. */
  router.use((req: Request, _res: Response, next: NextFunction) => {
    const emptyKey = req.path.startsWith(`${BASE}//`) || ((req.path === BASE || req.path === `${BASE}/`) && req.method !== 'GET');
    next(emptyKey ? invalid('key must not be empty', 'key') : undefined);
  });

  router.get(BASE, async (_req, res) => {
    res.json(await listKeys(keys, userIdOf(res)));
  });

  router.get(`${BASE}/:key`, async (req, res) => {
    const key = keyOf(req);
    const { jsonpath } = parseInput(PreferenceQuery, req.query, 'query');
    const document = await readDocument(documents, userIdOf(res), key);
    if (!document) throw notFound(`no preference ${key}`);
    res.json(jsonpath === undefined ? document : queryJsonPath(document, jsonpath));
  });

  router.put(`${BASE}/:key`, async (req, res) => {
    const key = keyOf(req);
    const document = parseInput(PreferenceDocument, req.body, 'body');
    const result = await execute(userIdOf(res), { type: 'ReplaceDocument', data: { key, document } });
    res.status(result.created ? 201 : 200).json(result.document);
  });

  router.delete(`${BASE}/:key`, async (req, res) => {
    const key = keyOf(req);
    const { jsonpath } = parseInput(PreferenceQuery, req.query, 'query');
    await execute(
      userIdOf(res),
      jsonpath === undefined ? { type: 'DeleteDocument', data: { key } } : { type: 'DeleteMatching', data: { key, jsonpath } },
    );
    res.status(204).end();
  });

  // With a {path}, the jsonpath query parameter is ignored (spec).
  router.get(`${BASE}/:key/*path`, async (req, res) => {
    const key = keyOf(req);
    const path = pathOf(req);
    const document = await readDocument(documents, userIdOf(res), key);
    const found = document ? getAt(document, path) : { found: false as const };
    if (!found.found) throw notFound(`no preference ${key} with a value at ${path.join('/')}`);
    res.json(found.value);
  });

  const writeAtPath = (type: 'PutAtPath' | 'MergeAtPath') => async (req: Request, res: Response) => {
    const key = keyOf(req);
    const path = pathOf(req);
    const value = type === 'MergeAtPath' ? parseInput(PartialUpdate, jsonBody(req), 'body').payload : jsonBody(req);
    const result = await execute(userIdOf(res), { type, data: { key, path, value } });
    const stored = result.document ? getAt(result.document, path) : { found: false as const };
    res.status(result.created ? 201 : 200).json(stored.found ? stored.value : null);
  };
  router.put(`${BASE}/:key/*path`, writeAtPath('PutAtPath'));
  router.post(`${BASE}/:key/*path`, writeAtPath('MergeAtPath'));

  router.delete(`${BASE}/:key/*path`, async (req, res) => {
    const key = keyOf(req);
    await execute(userIdOf(res), { type: 'DeleteAtPath', data: { key, path: pathOf(req) } });
    res.status(204).end();
  });

  return router;
}
