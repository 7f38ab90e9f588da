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
