import { queryInteger } from './common';
import { HISTORY_LIMITS, Item, SyncToken } from './history';
import { FullPlaylistV3 } from './playlists';
import { z } from './zod';

/**
 * Live sync (`GET /api/changes`, Server-Sent Events; docs/live-sync.md): the names of the events a stream carries
 * and the data of each. An event's `id` is a cursor: a reconnect with `Last-Event-ID` gets every change after it.
 */
export const CHANGE_EVENT_NAMES = ['ready', 'history', 'playlist', 'erasure', 'close'] as const;
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
  last_event_id: ChangeCursor.optional().openapi({
    description: 'where to resume, as `Last-Event-ID` (which wins when both are sent): for an EventSource opened anew',
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
/** `erasure`: the user's data was erased; the stream ends after it and every earlier cursor is void. */
export const ErasureChange = z.object({ erased_at: z.number().int() }).openapi('ErasureChange');

/** Why the server ended a stream; every reason but `erasure` resumes with the last `id`. */
export const CLOSE_REASONS = ['replaced', 'slow-reader', 'shutdown', 'unavailable'] as const;
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
});
export type HistoryChangesQuery = z.infer<typeof HistoryChangesQuery>;

export const HistoryChangesPage = z.object({
  changes: z.array(z.object({ item: Item, position: z.string() })),
  /** Where the answer ends: after its last entry when `more`, else the user's head (every applied change covered). */
  position: z.string(),
  /** How many of the user's events the read model has applied: a notification of revision r is shown once this is > r. */
  applied: z.number().int(),
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
