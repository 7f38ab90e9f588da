import { queryInteger } from './common';
import { HISTORY_LIMITS, Item, SyncToken } from './history';
import { FullPlaylistV3 } from './playlists';
import { PreferenceDocument } from './preference';
import { Profile } from './profile';
import { z } from './zod';
import { defineRoute } from './routes/define-route';
import { json, problem } from './routes/helpers';

/**
 * Live sync (`GET /api/changes`, Server-Sent Events; docs/live-sync.md): the names of the events a stream carries
 * and the data of each. An event's `id` is a cursor: a reconnect with `Last-Event-ID` gets every change after it.
 */
export const CHANGE_EVENT_NAMES = ['ready', 'history', 'playlist', 'preference', 'profile', 'erasure', 'close'] as const;
export type ChangeEventName = (typeof CHANGE_EVENT_NAMES)[number];

/** A cursor as the stream gives it in `id`: opaque, bound to its user (a foreign or altered one is refused, 400). */
export const CHANGE_CURSOR_PATTERN = /^c1\.[A-Za-z0-9_-]{1,2400}$/;
export const ChangeCursor = z
  .string()
  .regex(CHANGE_CURSOR_PATTERN, 'a cursor is the id of an event of this stream')
  .openapi({ description: "an event's `id`, opaque" });

/** The query of `GET /api/changes`: a ticket (browsers' EventSource cannot send Authorization), a cursor to resume from. */
export const ChangesQuery = z.object({
  ticket: z
    .string()
    // A sealed user id of up to 128 characters and its expiry: at most 243 characters.
    .regex(/^[A-Za-z0-9_-]{20,400}$/, 'ticket must be one answered by POST /api/changes/ticket')
    .optional()
    .openapi({ description: 'a single-use ticket from `POST /api/changes/ticket`, instead of the Authorization header' }),
  // Checked as a cursor only when it is used: a `Last-Event-ID` header sent beside it wins, whatever it holds.
  last_event_id: z.string().max(2500).optional().openapi({
    description: "where to resume, as `Last-Event-ID` (which wins when both are sent): for an EventSource opened anew; an event's `id`",
  }),
});
export type ChangesQuery = z.infer<typeof ChangesQuery>;

export const ChangeTicket = z
  .object({
    ticket: z.string().openapi({ description: 'single use, for this user only' }),
    expires_in: z.number().int().openapi({ description: 'seconds until it expires (30)' }),
  })
  .openapi('ChangeTicket');
export type ChangeTicket = z.infer<typeof ChangeTicket>;

/** `ready`: the stream is open and caught up to its `id` (sent once, after the changes a resume owed). */
export const ReadyChange = z.object({ cursor: ChangeCursor }).openapi('ReadyChange');
/** `history`: the entry as `GET /api/history/v2` shows it, a tombstone (`deleted: true`) included. */
export const HistoryChange = Item.openapi('HistoryChange');
/**
 * `playlist`: a playlist as `GET /api/playlist/v3/{businessId}` shows it after its change (a bookmark added or removed,
 * a rename, its creation), with `deleted: false`; or, once deleted, its ids with `deleted: true`.
 */
export const PlaylistChange = z
  .union([
    FullPlaylistV3.extend({ deleted: z.literal(false) }),
    z.object({ id: z.string(), businessId: z.string(), deleted: z.literal(true) }),
  ])
  .openapi('PlaylistChange');
export type PlaylistChange = z.infer<typeof PlaylistChange>;
/**
 * `preference`: a key and its document as `GET /api/preference/{key}` shows it after its change, with `deleted: false`;
 * once deleted (`DELETE /api/preference/{key}`), the key with `deleted: true`.
 */
export const PreferenceChange = z
  .union([
    z.object({ key: z.string(), document: PreferenceDocument, deleted: z.literal(false) }),
    z.object({ key: z.string(), deleted: z.literal(true) }),
  ])
  .openapi('PreferenceChange');
export type PreferenceChange = z.infer<typeof PreferenceChange>;
/** `profile`: the profile as `GET /api/profile/v3` shows it after its change (its creation included). */
export const ProfileChange = Profile.openapi('ProfileChange');
export type ProfileChange = z.infer<typeof ProfileChange>;
/** `erasure`: the user's data was erased; the stream ends after it and every earlier cursor is void. */
export const ErasureChange = z.object({ erased_at: z.number().int() }).openapi('ErasureChange');

/**
 * Why the server ended a stream: `resync` (the cursor is further behind than a resume may reach) reads the data again
 * from the API and opens the stream without a cursor; every other reason resumes with the last `id`.
 */
export const CLOSE_REASONS = ['replaced', 'slow-reader', 'shutdown', 'unavailable', 'rate-limited', 'resync'] as const;
export const CloseChange = z
  .object({
    reason: z.enum(CLOSE_REASONS),
    detail: z.string(),
  })
  .openapi('CloseChange');
export type CloseChange = z.infer<typeof CloseChange>;

/** Each event name with the schema of its data (the OpenAPI document and the client's parser read this table). */
export const CHANGE_EVENTS = {
  ready: ReadyChange,
  history: HistoryChange,
  playlist: PlaylistChange,
  preference: PreferenceChange,
  profile: ProfileChange,
  erasure: ErasureChange,
  close: CloseChange,
} as const satisfies Record<ChangeEventName, z.ZodType>;

/**
 * history-svc's internal route that the gateway pulls a stream's history changes from (`/internal/history/changes`,
 * not published): the entries changed after `since` in change order, each with the position just after it, so every
 * event of a stream has a cursor of its own. Without `since`: no entries, only the head (where a new stream starts).
 */
export const HistoryChangesQuery = z.object({
  since: SyncToken.optional(),
  limit: queryInteger('limit', HISTORY_LIMITS.maxPageSize).optional(),
  /** How far back the caller may reach, in events: further behind, the answer holds no entry (only `behind`). */
  reach: queryInteger('reach', 1_000_000).optional(),
});
export type HistoryChangesQuery = z.infer<typeof HistoryChangesQuery>;

export const HistoryChangesPage = z.object({
  changes: z.array(z.object({ item: Item, position: z.string() })),
  /** Where the answer ends: after its last entry when `more`, else the user's head (every applied change covered). */
  position: z.string(),
  /** How many of the user's events the read model has applied: a notification of revision r is shown once this is > r. */
  applied: z.number().int(),
  /** How many of the user's events came after `since` (0 without it): more than the changes owed, never fewer. */
  behind: z.number().int(),
  more: z.boolean(),
});
export type HistoryChangesPage = z.infer<typeof HistoryChangesPage>;

/** playlist-svc's internal route for live sync (`/internal/playlist/changes`): the playlists changed at or after `since`. */
export const PlaylistChangesQuery = z.object({
  since: z
    .string()
    .regex(/^[0-9]{1,15}$/, 'since must be a position from this route')
    .transform(Number)
    .optional(),
});

export const PlaylistChangesPage = z.object({
  /** Oldest change first; `position` is the user's stream revision after that playlist's last change. */
  changes: z.array(z.object({ playlist: PlaylistChange, position: z.number().int() })),
  /** How many of the user's playlist events the read model shows: where a new stream starts, and the wait's measure. */
  applied: z.number().int(),
});
export type PlaylistChangesPage = z.infer<typeof PlaylistChangesPage>;

/** A position in a user's preference changes: a store position, in decimal (up to 2^128). */
const StorePosition = z.string().regex(/^[0-9]{1,40}$/, 'since must be a position from this route');

/**
 * preference-svc's internal route for live sync (`/internal/preference/changes`): the keys changed at or after `since`
 * (a store position), oldest change first, at most `limit` (100 by default). Without `since`: none, only the head.
 */
export const PREFERENCE_CHANGES_MAX_PAGE = 100;
export const PreferenceChangesQuery = z.object({
  since: StorePosition.optional(),
  limit: queryInteger('limit', PREFERENCE_CHANGES_MAX_PAGE).optional(),
});
export type PreferenceChangesQuery = z.infer<typeof PreferenceChangesQuery>;

export const PreferenceChangesPage = z.object({
  /** Oldest change first; `position` is the store position after that key's last change. */
  changes: z.array(z.object({ preference: PreferenceChange, position: z.string() })),
  /** Where the answer ends: after its last change when `more`, else the user's head (never before `since`). */
  position: z.string(),
  /** The position after the user's last change the read model shows: a notification of position p is shown once this is > p. */
  applied: z.string(),
  more: z.boolean(),
});
export type PreferenceChangesPage = z.infer<typeof PreferenceChangesPage>;

/** profile-svc's internal route for live sync (`/internal/profile/changes`): the profile if changed at or after `since`. */
export const ProfileChangesQuery = PlaylistChangesQuery;

export const ProfileChangesPage = z.object({
  /** The profile, if it changed at or after `since`; `position` is the profile stream's revision after its last change. */
  changes: z.array(z.object({ profile: ProfileChange, position: z.number().int() })),
  /** How many of the user's profile events the read model shows: where a new stream starts, and the wait's measure. */
  applied: z.number().int(),
});
export type ProfileChangesPage = z.infer<typeof ProfileChangesPage>;

// ---- routes --------------------------------------------------------------------------------------------------

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
