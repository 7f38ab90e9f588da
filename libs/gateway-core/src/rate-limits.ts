import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { sendProblem } from '@udp/http-kit';
import type { Logger } from '@udp/telemetry';

/** Requests allowed per window, per authenticated user and per client address; 0 turns a limit off. */
export interface RateLimits {
  windowS: number;
  perUser: number;
  perAddress: number;
}

/** The 429 of a rate limit: its own problem type (`.../rate-limited`), apart from history's concurrency 429. */
export const RATE_LIMITED_TITLE = 'Rate Limited';

/**
 * One fixed-window limiter (express-rate-limit, in-memory store: counts are per gateway process). Over the
 * limit: 429 problem+json naming the limit and its variable, with `Retry-After` = whole seconds until the
 * client's window ends.
 */
function limiter(
  scope: 'user' | 'address',
  limit: number,
  windowS: number,
  key: (req: Request, res: Response) => string,
  logger: Logger,
): RequestHandler {
  const variable = scope === 'user' ? 'RATE_LIMIT_PER_USER' : 'RATE_LIMIT_PER_ADDRESS';
  const who = scope === 'user' ? 'this user' : 'this client address';
  return rateLimit({
    windowMs: windowS * 1000,
    limit,
    // RateLimit headers on every answer would cost bytes and time on every call; the 429 says what a client needs.
    standardHeaders: false,
    legacyHeaders: false,
    keyGenerator: key,
    // The library's own configuration checks (run once each) go to our log, not the console.
    logger,
    handler: (req, res) => {
      const resetAt =
        (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime?.getTime() ?? Date.now() + windowS * 1000;
      const retryAfterS = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
      res.setHeader('retry-after', String(retryAfterS));
      sendProblem(
        res,
        429,
        RATE_LIMITED_TITLE,
        `more than ${limit} requests in ${windowS} s from ${who} (${variable}); retry after ${retryAfterS} s`,
        { rate_limit: { scope, requests: limit, window_s: windowS } },
      );
    },
  });
}

/**
 * Per client address (`req.ip`: the real client behind TRUSTED_PROXIES), before authentication, so that floods
 * without credentials are limited too. IPv6 clients count per /56 (one customer's allocation), as the library does.
 */
export function perAddressLimit(limits: RateLimits, logger: Logger): RequestHandler {
  return limiter('address', limits.perAddress, limits.windowS, (req) => ipKeyGenerator(req.ip ?? ''), logger);
}

/** Per authenticated user (after authentication: the identity the gateway vouches for). */
export function perUserLimit(limits: RateLimits, logger: Logger): RequestHandler {
  return limiter('user', limits.perUser, limits.windowS, (_req, res) => (res.locals.caller as { userId: string }).userId, logger);
}
