import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Authenticator } from '@udp/auth';
import { sendProblem } from '@udp/http-kit';
import { authenticateCaller } from './edge-checks';

/** Requests allowed per window, per authenticated user and per client address; 0 turns a limit off. */
export interface RateLimits {
  windowS: number;
  perUser: number;
  perAddress: number;
  /**
   * Erasure requests (`DELETE /api/data`) per user, counted apart: a verified erasure request is counted here only,
   * so that no other traffic (the user's own devices included) can have it refused. Absent or 0: no limit.
   */
  erasurePerUser?: number;
}

type Scope = 'user' | 'address' | 'erasure';
const VARIABLES: Record<Scope, string> = {
  user: 'RATE_LIMIT_PER_USER',
  address: 'RATE_LIMIT_PER_ADDRESS',
  erasure: 'RATE_LIMIT_ERASURE_PER_USER',
};
const WHO: Record<Scope, string> = { user: 'this user', address: 'this client address', erasure: 'this user (erasure requests)' };

/** The 429 of a rate limit: its own problem type (`.../rate-limited`), apart from history's concurrency 429. */
export const RATE_LIMITED_TITLE = 'Rate Limited';

/** A key's window: requests counted in it, and when it ends (ms since the epoch). */
interface Window {
  hits: number;
  endsAt: number;
}

/**
 * Requests per key in fixed windows, each starting at its key's first request (as express-rate-limit's memory
 * store counts them). Synchronous on purpose: that library's middleware awaits four promises per request and reads
 * `req.ip` for its debug line; its two limiters cost a sync poll 10-14% of its throughput (docs/performance.md,
 * "Rate limits"). A key idle for a whole window is forgotten: at most once a window, as a request comes, the map of
 * the window before is dropped (a window it held ended by then: it was last counted before the map was set aside).
 */
class FixedWindows {
  private current = new Map<string, Window>();
  private previous = new Map<string, Window>();
  private setAsideAt = 0;

  constructor(private readonly windowMs: number) {}

  hit(key: string, now: number): Window {
    if (now - this.setAsideAt >= this.windowMs) {
      this.previous = this.current;
      this.current = new Map();
      this.setAsideAt = now;
    }
    let window = this.current.get(key);
    if (window === undefined) {
      window = this.previous.get(key) ?? { hits: 0, endsAt: now + this.windowMs };
      this.previous.delete(key);
      this.current.set(key, window);
    }
    if (window.endsAt <= now) {
      window.hits = 0;
      window.endsAt = now + this.windowMs;
    }
    window.hits++;
    return window;
  }
}

/**
 * One fixed-window limiter (in memory: counts are per gateway process). Over the limit: 429 problem+json naming the
 * limit and its variable, with `Retry-After` = whole seconds until the client's window ends.
 */
function limiter(
  scope: Scope,
  limit: number,
  windowS: number,
  key: (req: Request, res: Response) => string,
  skip?: (req: Request, res: Response) => boolean,
  windows = new FixedWindows(windowS * 1000),
): RequestHandler {
  const variable = VARIABLES[scope];
  const who = WHO[scope];
  return (req, res, next) => {
    if (skip?.(req, res)) return next();
    const now = Date.now();
    const window = windows.hit(key(req, res), now);
    if (window.hits <= limit) return next();
    const retryAfterS = Math.max(1, Math.ceil((window.endsAt - now) / 1000));
    res.setHeader('retry-after', String(retryAfterS));
    sendProblem(
      res,
      429,
      RATE_LIMITED_TITLE,
      `more than ${limit} requests in ${windowS} s from ${who} (${variable}); retry after ${retryAfterS} s`,
      { rate_limit: { scope, requests: limit, window_s: windowS } },
    );
  };
}

/**
 * Per client address (`req.ip`: the real client behind TRUSTED_PROXIES), before authentication, so that floods
 * without credentials are limited too. IPv6 clients count per /56 (one customer's allocation), as the library does.
 */
export function perAddressLimit(limits: RateLimits): RequestHandler {
  return limiter('address', limits.perAddress, limits.windowS, (req) => ipKeyGenerator(req.ip ?? ''), isVerifiedErasure);
}

const userOf = (_req: Request, res: Response) => (res.locals.caller as { userId: string }).userId;

/** The limit per user as middleware, and as a count that work other than a request can be charged to (`charge`). */
export interface PerUserLimit extends RequestHandler {
  /** Counts one request of the user; false when that passes their limit. */
  charge(userId: string): boolean;
}

/** Per authenticated user (after authentication: the identity the gateway vouches for); erasure requests apart. */
export function perUserLimit(limits: RateLimits): PerUserLimit {
  const windows = new FixedWindows(limits.windowS * 1000);
  // No caller yet: a live-sync request with a ticket, not credentials (its ticket was counted when it was issued).
  const skip = (_req: Request, res: Response) => res.locals.erasure === true || !res.locals.caller;
  const middleware = limiter('user', limits.perUser, limits.windowS, userOf, skip, windows);
  return Object.assign(middleware, { charge: (userId: string) => windows.hit(userId, Date.now()).hits <= limits.perUser });
}

/**
 * Marks an erasure request (mounted as `DELETE /api/data`, so Express matches it as it routes it) and verifies its
 * credentials before the limit per address: a verified one skips the shared limits and meets its own budget
 * (`erasureLimit`); one whose credentials fail goes on to the limit per address like any request, and to its 401.
 */
export function verifyErasureFirst(authenticator: Authenticator): RequestHandler {
  return (req, res, next) => {
    res.locals.erasure = true;
    authenticateCaller(authenticator, req).then(
      (caller) => {
        res.locals.caller = caller;
        next();
      },
      () => next(),
    );
  };
}

const isVerifiedErasure = (_req: Request, res: Response) => res.locals.erasure === true && res.locals.caller !== undefined;

/** The erasure requests' own budget per user, which no other request counts against. */
export function erasureLimit(limits: RateLimits): RequestHandler {
  const budget = limiter('erasure', limits.erasurePerUser ?? 0, limits.windowS, userOf);
  return (req, res, next) => (res.locals.erasure === true ? budget(req, res, next) : next());
}
