import type { NextFunction, Request, Response } from 'express';
import { AuthenticationError, type Authenticator, IDENTITY_HEADER, type Identity } from '@udp/auth';
import { TOKEN_TYPES } from '@udp/contracts';
import { HttpError, badRequest, erasurePending, nameRoute, unauthorized } from '@udp/http-kit';
import { LRUCache } from 'lru-cache';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface DocumentedPath {
  pattern: RegExp;
  /** The template as Express writes routes (`/api/history/v2/:itemId`): the route on metrics and span names. */
  route: string;
  methods: string[];
  /** How many `{parameters}` the template has: the fewer, the more concrete. */
  parameters: number;
}

/**
 * The documented paths of an OpenAPI document as patterns: `{name}` is one path segment, except `{path}`,
 * which may hold slashes (the preference path `favorites/urn:a/date`).
 */
function documentedPaths(document: { paths?: Record<string, object> }): DocumentedPath[] {
  return Object.entries(document.paths ?? {}).map(([template, operations]) => {
    const source = template
      .split(/(\{[^}]+\})/)
      .map((part) => (part === '{path}' ? '.+' : part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
      .join('');
    const methods = METHODS.filter((m) => m in operations).map((m) => m.toUpperCase());
    const route = template.replace(/\{([^}]+)\}/g, ':$1');
    return { pattern: new RegExp(`^${source}$`), route, methods, parameters: (template.match(/\{/g) ?? []).length };
  });
}

/**
 * 405 with `Allow` for a method the document does not list on a path it documents (TRACE, PATCH...). As
 * OpenAPI matches paths, a concrete path wins over a templated one: `/api/history/v2/batch` is the batch
 * path (POST), not the item `batch` of `DELETE /api/history/v2/{itemId}`. HEAD goes with GET, as Express
 * serves it. Paths the document does not know go on (to their 404).
 */
export function methodNotAllowed(document: { paths?: Record<string, object> }) {
  const paths = documentedPaths(document);
  /** The methods allowed on a documented path, and the route of each (the most concrete template that has it). */
  const allowedOn = (path: string): Map<string, string> | null => {
    const matching = paths.filter((p) => p.pattern.test(path));
    if (matching.length === 0) return null;
    const fewest = Math.min(...matching.map((p) => p.parameters));
    const allowed = new Map<string, string>();
    for (const p of matching.filter((m) => m.parameters === fewest)) for (const method of p.methods) allowed.set(method, p.route);
    if (allowed.has('GET')) allowed.set('HEAD', allowed.get('GET')!);
    return allowed;
  };
  // Each request path's answer, remembered: testing every documented pattern costs more (docs/performance.md). Paths hold
  // ids, so only paths of up to 512 characters, at most 10,000 of them (the least recently used dropped first): at
  // most about 5 MB, whatever paths clients choose.
  const known = new LRUCache<string, { allowed: Map<string, string> | null }>({ max: 10_000 });
  return (req: Request, res: Response, next: NextFunction) => {
    const path = req.path; // a getter that parses the URL: once
    let allowed = known.get(path)?.allowed;
    if (allowed === undefined) {
      allowed = allowedOn(path);
      if (path.length <= 512) known.set(path, { allowed });
    }
    if (allowed === null) return next();
    const route = allowed.get(req.method);
    if (route !== undefined) {
      // The gateway forwards by prefix: the documented route names its metrics and span better than `/api/history`.
      nameRoute(res, route);
      return next();
    }
    const allow = [...allowed.keys()].sort().join(', ');
    next(new HttpError(405, 'Method Not Allowed', `${req.method} is not allowed on ${req.path}; allowed: ${allow}`, undefined, { allow }));
  };
}

/** The README's promise: the signed identity header is the gateway's alone; a client that sends it is refused. */
export function refuseClientIdentity(req: Request, _res: Response, next: NextFunction) {
  if (req.headers[IDENTITY_HEADER] === undefined) return next();
  next(
    badRequest(`${IDENTITY_HEADER} is set by the gateway only; do not send it`, [
      { field: IDENTITY_HEADER, message: 'must not be sent by a client' },
    ]),
  );
}

/**
 * `Token-Type` names the scheme of an `Authorization` value that carries none (a scheme in the Authorization
 * value wins). A value other than Bearer or sessionToken (any letter case) is a 400 naming the header, never
 * ignored.
 */
export function checkTokenType(req: Request, _res: Response, next: NextFunction) {
  const tokenType = req.header('token-type');
  if (tokenType === undefined || TOKEN_TYPES.some((t) => t.toLowerCase() === tokenType.toLowerCase())) return next();
  next(
    badRequest(`Token-Type must be ${TOKEN_TYPES.join(' or ')}`, [{ field: 'Token-Type', message: `must be ${TOKEN_TYPES.join(' or ')}` }]),
  );
}

/** The caller of a request's credentials: refused credentials are a 401, an identity provider that cannot tell a 503. */
export async function authenticateCaller(authenticator: Authenticator, req: Request): Promise<Identity> {
  try {
    return await authenticator.authenticate(req.header('authorization'), req.header('token-type'));
  } catch (error) {
    throw error instanceof AuthenticationError
      ? unauthorized(error.message)
      : new HttpError(503, 'Service Unavailable', 'cannot verify credentials now');
  }
}

/** A caller who sent credentials lands in res.locals.caller (a 401 if they fail); one who sent none goes on. */
export function authenticateIfSent(authenticator: Authenticator) {
  const required = authenticate(authenticator);
  return (req: Request, res: Response, next: NextFunction) =>
    req.header('authorization') === undefined ? next() : required(req, res, next);
}

/** Routes after this need a caller; it lands in res.locals.caller. */
export function authenticate(authenticator: Authenticator) {
  return (req: Request, res: Response, next: NextFunction) => {
    authenticateCaller(authenticator, req).then((caller) => {
      res.locals.caller = caller;
      next();
    }, next);
  };
}

/** Users held for now (their erasure pending), each by reasons that end at a time or when released (erasure-holds.ts). */
export class HeldUsers {
  /** The erasure's own requests under way, and the erasures heard: erasure id -> until when it holds. */
  private readonly holds = new Map<string, { requests: number; erasures: Map<string, number> }>();

  constructor(private readonly now: () => number) {}

  holding(userId: string): boolean {
    const hold = this.holds.get(userId);
    if (!hold) return false;
    const now = this.now();
    for (const [erasureId, until] of hold.erasures) if (until <= now) hold.erasures.delete(erasureId);
    this.forgetIfEmpty(userId);
    return hold.requests > 0 || hold.erasures.size > 0;
  }

  /** The user's own erasure request is under way (+1) or over (-1). */
  request(userId: string, change: 1 | -1): void {
    this.holdOf(userId).requests += change;
    this.forgetIfEmpty(userId);
  }

  hold(userId: string, erasureId: string, until: number): void {
    this.holdOf(userId).erasures.set(erasureId, until);
  }

  /** One erasure is over (or, without an id, every one heard of the user). */
  release(userId: string, erasureId?: string): void {
    const hold = this.holds.get(userId);
    if (!hold) return;
    if (erasureId === undefined) hold.erasures.clear();
    else hold.erasures.delete(erasureId);
    this.forgetIfEmpty(userId);
  }

  private holdOf(userId: string) {
    let hold = this.holds.get(userId);
    if (!hold) this.holds.set(userId, (hold = { requests: 0, erasures: new Map() }));
    return hold;
  }

  private forgetIfEmpty(userId: string): void {
    const hold = this.holds.get(userId);
    if (hold && hold.requests === 0 && hold.erasures.size === 0) this.holds.delete(userId);
  }
}

/**
 * After authentication: a held user's requests are refused (409 `erasure-pending`), but for the erasure's own
 * (`DELETE /api/data`, handed to `onErasure`, which holds the user from its arrival) and its status.
 */
export function refuseHeldUsers(held: HeldUsers, onErasure: (userId: string, res: Response) => void) {
  return (req: Request, res: Response, next: NextFunction) => {
    const userId = (res.locals.caller as Identity | undefined)?.userId;
    if (userId === undefined) return next();
    // As Express routes it: without case, a trailing slash left out.
    const path = () => req.originalUrl.split('?')[0].toLowerCase().replace(/\/+$/, '');
    if (req.method === 'DELETE' && path() === '/api/data') {
      onErasure(userId, res);
      return next();
    }
    if (held.holding(userId) && !(req.method === 'GET' && path().startsWith('/api/data/erasure/'))) return next(erasurePending());
    next();
  };
}
