import { timeSlices } from '@udp/retry';
import type { IRouter, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Route } from '@udp/contracts';
import type { z } from 'zod';
import { badRequest, type FieldProblem, notFoundError } from './problem';

/** Validates input from outside with a contracts schema; a failure is a 400 naming every offending field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'path'): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors: FieldProblem[] = result.error.issues.map((issue) => ({
    field: issue.path.length ? formatPath(issue.path) : where,
    message: issue.message,
  }));
  throw badRequest(`invalid ${where}: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, errors);
}

function formatPath(path: PropertyKey[]): string {
  return path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)), '');
}

/** What a route handler receives: the request's parts, validated and typed by the route's own schemas. */
export interface RouteInput<Params extends z.ZodType, Query extends z.ZodType, Body extends z.ZodType> {
  params: z.infer<Params>;
  query: z.infer<Query>;
  body: z.infer<Body>;
}

export type RouteHandler<Params extends z.ZodType, Query extends z.ZodType, Body extends z.ZodType> = (
  input: RouteInput<Params, Query, Body>,
  req: Request,
  res: Response,
) => Promise<void> | void;

/**
 * The Express path of a route: `{name}` becomes `:name`, and the route's rest parameter `*name` (Express then
 * gives it as the list of its segments).
 */
export function expressPath(route: Pick<Route, 'path' | 'restParam'>): string {
  return route.path.replace(/\{([^}]+)\}/g, (_, name: string) => (name === route.restParam ? `*${name}` : `:${name}`));
}

/**
 * Mounts one route of a contracts table (each service's contract file in libs/contracts/src): the path and method come from the table,
 * path parameters, query and body are validated with its schemas (a failure is the usual 400 problem, or 404 for a
 * route whose malformed path names no resource), then the handler gets them typed. Headers are not validated here.
 */
export function mountRoute<Params extends z.ZodType, Query extends z.ZodType, Body extends z.ZodType>(
  router: IRouter,
  route: Route<Params, Query, Body>,
  handler: RouteHandler<Params, Query, Body>,
): void {
  router[route.method](expressPath(route), routeHandler(route, handler));
}

/** What `mountRoute` mounts: the route's input validated, then the handler (also for a route served beside a router). */
export function routeHandler<Params extends z.ZodType, Query extends z.ZodType, Body extends z.ZodType>(
  route: Route<Params, Query, Body>,
  handler: RouteHandler<Params, Query, Body>,
): (req: Request, res: Response) => Promise<void> {
  const { params, query, body } = route.request ?? {};
  const queries = query && new ParsedQueries(query);
  return async (req: Request, res: Response) => {
    const { slice } = timeSlices();
    const input = {
      params: params && parseParams(route, params, req),
      query: queries?.of(req),
      body: body && parseInput(body, req.body, 'body'),
    } as RouteInput<Params, Query, Body>;
    // A large body's validation (5,000 history entries: about 20 ms) is a slice of its own: other requests go first.
    await slice();
    await handler(input, req, res);
  };
}

/**
 * A route's queries as parsed lately, by their text: a device polling for changes sends the same query again and
 * again, and its parse (the query string by Express, then the schema) was 3-4 µs of a 50 µs answer. The parse depends
 * on the text alone; the value handed out is frozen, as every handler's input is theirs to read, not to change. Kept:
 * up to `PARSED_QUERIES` of up to `PARSED_QUERY_CHARS` characters; a query that fails is parsed each time.
 */
class ParsedQueries<Query extends z.ZodType> {
  private readonly parsed = new Map<string, z.infer<Query>>();

  constructor(private readonly schema: Query) {}

  of(req: Request): z.infer<Query> {
    const at = req.url.indexOf('?');
    const text = at < 0 ? '' : req.url.slice(at + 1);
    const known = this.parsed.get(text);
    if (known !== undefined) return known;
    const value = parseInput(this.schema, req.query, 'query');
    if (text.length <= PARSED_QUERY_CHARS && value !== null && typeof value === 'object') {
      // Full, it starts again (dropping the oldest one by one walks the map's holes from its start on every parse).
      if (this.parsed.size >= PARSED_QUERIES) this.parsed.clear();
      for (const field of Object.values(value)) if (Array.isArray(field)) Object.freeze(field);
      Object.freeze(value);
      this.parsed.set(text, value);
    }
    return value;
  }
}

const PARSED_QUERIES = 1_000;
const PARSED_QUERY_CHARS = 256;

function parseParams<Params extends z.ZodType>(route: Route<Params>, schema: Params, req: Request): z.infer<Params> {
  // The schema sees a rest parameter as the text it documents; the handler can still read its segments in req.params.
  const rest = route.restParam;
  const value = rest ? { ...req.params, [rest]: ([] as string[]).concat(req.params[rest] ?? []).join('/') } : req.params;
  if (!route.malformedPathIsNotFound) return parseInput(schema, value, 'path');
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw notFoundError(`nothing at this path: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  return parsed.data;
}

/*
 * Middleware run in order as one layer of a router. Express's router pays for every layer a request passes, matching
 * or not (its path test, its dispatch state, a debug call): a request to the gateway's first service passed 29 of its
 * 54 layers. Run here, the gateway's edge groups are one layer each and the services' routes one: 18 layers.
 */

/**
 * Runs `chain` as Express runs a router's layers: the next one when one calls `next()`; `done(error)` on an error
 * passed to `next`, thrown, or of a rejected promise; `done()` after the last.
 */
export function runChain(chain: readonly RequestHandler[], req: Request, res: Response, done: (error?: unknown) => void): void {
  let i = 0;
  const step = (error?: unknown): void => {
    // As Express: null or undefined is no error (cors passes null).
    if (error !== undefined && error !== null) return done(error);
    const layer = chain[i++];
    if (!layer) return done();
    try {
      const answer = layer(req, res, step) as unknown;
      if (answer instanceof Promise) answer.catch(done);
    } catch (thrown) {
      done(thrown);
    }
  };
  step();
}

/** `chain` as one middleware. */
export const inOneLayer =
  (chain: readonly RequestHandler[]): RequestHandler =>
  (req, res, next) =>
    runChain(chain, req, res, next);

export interface Mount {
  /** A path prefix, e.g. `/api/history`: the path itself and every path under it, in any case, as `app.use(prefix)`. */
  prefix: string;
  chain: RequestHandler[];
}

/**
 * `app.use(prefix, ...chain)` for each mount, in order, as one middleware: a request runs the chain of the first
 * mount its path is under (and of the next one under it when that chain calls `next()`), with `req.baseUrl` the
 * prefix and `req.url` the rest while it runs, as Express sets them; a path under none goes on at once.
 */
export function byPrefix(mounts: readonly Mount[]): RequestHandler {
  const prefixes = mounts.map(({ prefix, chain }) => ({ prefix: prefix.toLowerCase(), chain }));
  return (req: Request, res: Response, next: NextFunction) => {
    const path = req.path;
    const lower = path.toLowerCase();
    const { url, baseUrl } = req;
    let i = 0;
    const after = (error?: unknown): void => {
      req.url = url;
      req.baseUrl = baseUrl;
      if (error !== undefined && error !== null) return next(error);
      while (i < prefixes.length) {
        const { prefix, chain } = prefixes[i++];
        if (lower !== prefix && !lower.startsWith(`${prefix}/`)) continue;
        // The URL without the prefix, kept in absolute form (scheme and host first) when it came so.
        const at = url.startsWith('/') ? 0 : Math.max(0, url.indexOf(path));
        const rest = url.slice(at + prefix.length);
        req.baseUrl = baseUrl + path.slice(0, prefix.length);
        req.url = url.slice(0, at) + (rest.startsWith('/') ? rest : `/${rest}`);
        return runChain(chain, req, res, after);
      }
      next();
    };
    after();
  };
}
