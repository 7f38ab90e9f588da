import { CHANGE_EVENTS, ChangeTicket, ChangesQuery } from '../changes';
import { z } from '../zod';
import { defineRoute } from './define-route';
import { json, problem } from './helpers';

/** `history` → `HistoryChange`: the component (registered in openapi.ts) that holds the event's data schema. */
export const changeEventSchemaName = (event: string) => `${event[0].toUpperCase()}${event.slice(1)}Change`;

const events = Object.keys(CHANGE_EVENTS)
  .map((name) => `\`${name}\` (data: \`${changeEventSchemaName(name)}\`)`)
  .join(', ');

/** Live sync, served by the gateway itself (libs/gateway-core/src/changes; docs/live-sync.md). */
export const changesApi = {
  stream: defineRoute({
    operationId: 'streamChanges',
    method: 'get',
    path: '/api/changes',
    tags: ['changes'],
    summary: "The caller's changes, pushed as Server-Sent Events as they happen",
    description: [
      `Events: ${events}. Each change's \`id\` is a cursor: reconnecting with \`Last-Event-ID\` (EventSource does it by`,
      'itself) sends every change after it exactly once. A comment (`:`) every `CHANGES_HEARTBEAT_S` seconds keeps proxies',
      'from closing an idle stream. The server ends a stream with a `close` event (resume with the last id) or an',
      '`erasure` event (start again without a cursor). Authenticate with the Authorization header, or (browsers) with a',
      'ticket from `POST /api/changes/ticket`.',
    ].join(' '),
    security: [{ bearer: [] }, { sessionToken: [] }, {}],
    request: {
      query: ChangesQuery,
      headers: z.object({
        'last-event-id': z.string().optional().openapi({ description: 'the cursor to resume after: an event id of a stream of this user' }),
      }),
    },
    responses: {
      200: {
        description: `Server-Sent Events: ${events}`,
        content: {
          'text/event-stream': {
            // One Server-Sent Event (as clients and schemathesis parse the stream): its name, its cursor and its data,
            // the JSON text of the event's schema (a component: <Name>Change). Heartbeats are comments, not events.
            schema: z
              .object({
                event: z.enum(Object.keys(CHANGE_EVENTS) as [keyof typeof CHANGE_EVENTS, ...Array<keyof typeof CHANGE_EVENTS>]),
                id: z.string().optional().openapi({ description: 'the cursor after this event (changes and ready)' }),
                data: z.string().openapi({ description: 'JSON text of the event: components/schemas/<Name>Change' }),
                retry: z.number().int().optional(),
              })
              .openapi({ description: 'each event of the stream; see docs/live-sync.md' }),
          },
        },
      },
      400: problem('a malformed, unknown or foreign cursor (`Last-Event-ID` or `last_event_id`), or a malformed ticket'),
      401: problem('missing or invalid credentials, or a ticket that is unknown, already used or expired'),
      503: problem('the gateway process holds `CHANGES_MAX_STREAMS` streams, or the change feed is not running; retry'),
    },
  }),
  ticket: defineRoute({
    operationId: 'createChangesTicket',
    method: 'post',
    path: '/api/changes/ticket',
    tags: ['changes'],
    summary: 'A single-use ticket to open the change stream without an Authorization header (browsers)',
    description: 'Valid 30 s, once, for the caller only: `GET /api/changes?ticket=…`. A long-lived token never goes in a URL.',
    responses: {
      200: json(ChangeTicket, 'the ticket'),
      401: problem('missing or invalid credentials'),
      503: problem('the gateway process holds `CHANGES_MAX_TICKETS` unused tickets; retry'),
    },
  }),
};
