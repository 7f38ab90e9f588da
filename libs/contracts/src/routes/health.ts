import { ProblemDetails } from '../common';
import { z } from '../zod';
import { defineRoute } from './define-route';

const PartStatus = z.enum(['UP', 'DOWN']);
/** A 503 from /health/ names what is down: the gateway lists each service, a service lists its parts. */
const HealthProblem = ProblemDetails.extend({
  services: z
    .record(z.string(), z.object({ status: PartStatus, checks: z.record(z.string(), z.string()).optional() }))
    .optional()
    .describe('gateway: each service, UP or DOWN, with the parts a DOWN service named'),
  checks: z.record(z.string(), PartStatus).optional().describe('a service: event_store, read_models, bus, projections'),
}).openapi('HealthProblem');

/** `/health/`: the gateway's, for the whole platform (each service answers its own, not published). */
export const healthApi = {
  health: defineRoute({
    operationId: 'getHealth',
    method: 'get',
    path: '/health/',
    tags: ['health'],
    summary: 'Liveness of the API and its stores',
    security: [],
    responses: {
      200: { description: 'UP: every service and every store a write needs answers', content: { 'text/plain': { schema: z.string() } } },
      503: {
        description: 'a service or a store is down; the body names which',
        content: { 'application/problem+json': { schema: HealthProblem } },
      },
    },
  }),
};
