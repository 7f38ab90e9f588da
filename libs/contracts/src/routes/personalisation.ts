import { CodopsParam, EndpointAnswer, EndpointQuery } from '../personalisation';
import { z } from '../zod';
import { defineRoute } from './define-route';
import { json, problem } from './helpers';

/** The gateway's personalisation endpoints (libs/personalisation). A malformed codops or endpoint is unknown: 404. */
export const personalisationApi = {
  endpoint: defineRoute({
    operationId: 'getPersonalisationEndpoint',
    method: 'get',
    path: '/api/v1/{codops}/{endpoint}',
    malformedPathIsNotFound: true,
    tags: ['personalisation'],
    summary: 'A personalisation endpoint of a codops, served by one of its components (A/B split on u, or override)',
    description: 'Personal components read the data of the caller named by the token only; without a token they fall back to `trending`.',
    security: [{}, { bearer: [] }, { sessionToken: [] }],
    request: {
      params: CodopsParam,
      query: EndpointQuery,
      headers: z.object({
        'x-service-debug-secret': z
          .string()
          .optional()
          .openapi({ description: 'the codops secret: adds `debug` and `debug_spans`; never from a browser or app' }),
      }),
    },
    responses: {
      200: {
        ...json(EndpointAnswer, 'the items'),
        content: { ...json(EndpointAnswer, '').content, 'application/x-ndjson': { schema: z.string() } },
      },
      400: problem('invalid u, size or component; `errors` names the field'),
      401: problem('a token was sent and is invalid'),
      404: problem('unknown codops or endpoint'),
      429: problem('too many wrong debug secrets'),
    },
  }),
};
