import type { Request } from 'express';
import { HttpError } from '@udp/http-kit';
import { DEBUG_SECRET_HEADER } from '@udp/telemetry';
import { type FailureLimiter, lockoutKey, secretMatches } from './secrets';

export interface DebugAccess {
  req: Request;
  codops: string;
  /** codops -> secret that unlocks the debug block. */
  secrets: Map<string, string>;
  limiter: FailureLimiter;
}

/**
 * Whether the request unlocks the debug block with its codops' secret. The secret goes no further than this check:
 * it is removed from the request before any component or service runs. Wrong secrets are counted per codops and
 * client (`req.ip`: the peer, or the client named by a proxy the gateway trusts); too many are a 429.
 */
export function debugUnlocked({ req, codops, secrets, limiter }: DebugAccess): boolean {
  const given = req.header(DEBUG_SECRET_HEADER);
  delete req.headers[DEBUG_SECRET_HEADER];
  if (given === undefined) return false;
  const key = lockoutKey(codops, req.ip);
  const wait = limiter.blocked(key);
  if (wait !== null)
    throw new HttpError(429, 'Too Many Requests', 'too many wrong debug secrets; retry later', undefined, { 'retry-after': String(wait) });
  if (secretMatches(secrets.get(codops), given)) return true;
  limiter.fail(key);
  req.log.warn({ codops }, 'wrong debug secret');
  return false;
}
