import type { ResponseConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from '../zod';
import { ProblemDetails } from '../common';

/** Building blocks for path registrations, so every area documents errors the same way. */
export const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemDetails } } });
export const commonErrors = {
  400: problem('invalid input; `errors` names each offending field'),
  401: problem('missing or invalid credentials'),
  403: problem('forbidden'),
  503: problem('a store the request needs is down; nothing was stored, retry after `Retry-After` seconds'),
};
/** A per-user quota of stored data (docs/architecture.md, "Bounded work and per-user quotas"). */
export const quotaExceeded = (what: string) => ({
  422: problem(`a per-user quota is reached (title "Quota Exceeded"; \`limit\` names the setting, \`max\` its value): ${what}`),
});
export const writeErrors = { ...commonErrors, 413: problem('body too large'), 415: problem('body is not JSON') };
export const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { 'application/json': { schema } } });
export const empty = (description: string) => ({ description });

/**
 * `responses` with `status` answered for a reason every operation shares (with `Retry-After`), beside the operation's own
 * answer of that status if it has one.
 */
function withSharedRefusal(responses: Record<number, ResponseConfig>, status: number, description: string): Record<number, ResponseConfig> {
  const own = responses[status];
  const retryAfter = { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' as const, minimum: 1 } } };
  return {
    ...responses,
    [status]: own
      ? { ...own, description: `${own.description}; or ${description}`, headers: retryAfter }
      : { ...problem(description), headers: retryAfter },
  };
}

const ERASURE_PENDING =
  "the user's data is being erased (problem type `https://problems.udp.example/erasure-pending`): nothing is read or written until it completes; retry after `Retry-After` seconds";

/**
 * Every operation of a user but the erasure's own meets the erasure boundary (docs/erasure.md): its 409 says so beside
 * any 409 of its own. Public operations (no credentials) and the erasure's request and status do not.
 */
export function withErasurePending(
  route: { security?: unknown[]; method: string; path: string },
  responses: Record<number, ResponseConfig>,
) {
  const erasureOwn = (route.method === 'delete' && route.path === '/api/data') || route.path.startsWith('/api/data/erasure/');
  if ((Array.isArray(route.security) && route.security.length === 0) || erasureOwn) return responses;
  return withSharedRefusal(responses, 409, ERASURE_PENDING);
}

const RATE_LIMITED =
  'over a rate limit of the gateway, per user or per client address (problem type `https://problems.udp.example/rate-limited`); retry after `Retry-After` seconds';

/** Every operation may meet the gateway's rate limits: its 429 says so beside any 429 of its own (a write conflict). */
export function withRateLimit(responses: Record<number, ResponseConfig>): Record<number, ResponseConfig> {
  return withSharedRefusal(responses, 429, RATE_LIMITED);
}
