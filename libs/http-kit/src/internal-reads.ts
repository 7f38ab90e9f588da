import { Router } from 'express';
import { userIdOf } from './service-edge';

/**
 * A read a service answers the gateway on an internal route (live sync's pulls: `GET /internal/history/changes`), as a
 * function of the caller and the query: the route is made from it (`internalReadRoutes`), and the embedded gateway,
 * which runs the service in its own process, calls it directly for the same answer without a request at all.
 * `query` is the query string's parameters, unchecked: the read parses them as the route would.
 */
export type InternalRead = (userId: string, query: unknown) => Promise<unknown>;
/** A service's internal reads by path. */
export type InternalReads = Record<string, InternalRead>;

/** The GET routes of a service's internal reads: the caller the gateway vouched for, the answer as JSON. */
export function internalReadRoutes(reads: InternalReads): Router {
  const router = Router();
  for (const [path, read] of Object.entries(reads)) {
    router.get(path, async (req, res) => {
      res.json(await read(userIdOf(res), req.query));
    });
  }
  return router;
}
