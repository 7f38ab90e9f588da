import { EpochMillis, INT32_DIGITS, VISIBLE_NAME_PATTERN, businessId, pathInt32 } from './common';
import { z } from './zod';
import { defineRoute } from './routes/define-route';
import { commonErrors, empty, json, problem, quotaExceeded, writeErrors } from './routes/helpers';

/**
 * playlist-svc's contract: the schemas of its requests and answers (v2 and v3), then its route table
 * (`playlistApi`). Its events: events/playlists.ts.
 */

/**
 * Limits of the playlist API and their defaults. playlist-svc reads the configured values of the first two
 * from PLAYLIST_MAX_PLAYLISTS and PLAYLIST_MAX_BOOKMARKS (docs/playlist-svc.md); the others are fixed.
 */
export const PLAYLIST_LIMITS = {
  /** Standard playlists per user (the watch-later playlist does not count). */
  maxPlaylists: 100,
  /** Bookmarks per playlist, the watch-later playlist included. */
  maxBookmarks: 1000,
  /** Entries in one bulk `PUT .../bookmarks` body. */
  maxBulkItems: 1000,
  /** Ids named in one `ids=` or `mediaIds=` query. */
  maxIdsPerQuery: 1000,
  maxIdLength: 256,
  maxNameLength: 256,
} as const;

/** Business id (and technical id) of the watch-later playlist that every user has. */
export const WATCH_LATER = 'watch_later';
/** The name of the watch-later playlist until the user gives it another. */
export const WATCH_LATER_DEFAULT_NAME = 'Watch later';
/** `POST /api/playlist/v3/new/bookmarks` owns this segment, so no playlist may take it as business id. */
export const RESERVED_BUSINESS_IDS = ['new'] as const;

export const PlaylistType = z.enum(['standard', 'watch_later']).openapi('PlaylistType');
export type PlaylistType = z.infer<typeof PlaylistType>;

/** A required string with messages that name the field: missing, wrong type, empty, too long. */
const requiredText = (field: string, max: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .min(1, { error: `${field} must not be empty`, abort: true })
    .max(max, { error: `${field} is at most ${max} characters`, abort: true });

/** Ids follow the one business-id rule of the whole API (common.ts). */
const idText = businessId;

const MediaId = idText('media_id');
const ItemId = idText('itemId');
/** A business id, and not a reserved one: one pattern (with a lookahead), so the document states it too. */
const BusinessId = (field: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .min(1, { error: `${field} must not be empty`, abort: true })
    .max(PLAYLIST_LIMITS.maxIdLength, { error: `${field} is at most ${PLAYLIST_LIMITS.maxIdLength} characters`, abort: true })
    .regex(
      new RegExp(`^(?!(?:${RESERVED_BUSINESS_IDS.join('|')})$)[^\\u0000-\\u001f\\u007f]*$`),
      `${field} must not contain control characters, and "${RESERVED_BUSINESS_IDS.join('", "')}" is reserved by POST /api/playlist/v3/new/bookmarks`,
    );
/** No control characters (U+0000 to U+001F, U+007F), as in ids: a pattern, so the OpenAPI document states it. */
const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f]*$/;
const PlaylistName = requiredText('name', PLAYLIST_LIMITS.maxNameLength).regex(VISIBLE_NAME_PATTERN, {
  error: (issue) =>
    NO_CONTROL_CHARACTERS.test(String(issue.input)) ? 'name must not be blank' : 'name must not contain control characters',
});
const ClientDate = EpochMillis.optional().openapi({
  description: 'when the item was added (ms since the epoch); used only when earlier than the server time, which is the default',
});

/** A JSON object body: anything else (an array, a string, no body) is refused naming the body. */
const body = <T extends z.core.$ZodLooseShape>(shape: T) =>
  z.object(shape, { error: (issue) => (issue.input === undefined ? 'a JSON object body is required' : 'the body must be a JSON object') });

// ---- v2 requests -------------------------------------------------------------------------------------------

export const NewPlaylist = body({
  name: PlaylistName,
  system: z.boolean({ error: 'system must be true or false' }).optional().openapi({
    description: 'true asks for the system playlist (watch later): it exists for every user and is answered as it is',
  }),
}).openapi('NewPlaylist');
export type NewPlaylist = z.infer<typeof NewPlaylist>;

export const NewPlaylistWithContent = body({ media_id: MediaId, name: PlaylistName }).openapi('NewPlaylistWithContent');
export type NewPlaylistWithContent = z.infer<typeof NewPlaylistWithContent>;

export const NewMediaForPlaylistV2 = body({ media_id: MediaId, date: ClientDate }).openapi('NewMediaForPlaylistV2');
export type NewMediaForPlaylistV2 = z.infer<typeof NewMediaForPlaylistV2>;

// ---- v3 requests -------------------------------------------------------------------------------------------

export const NewPlaylistWithContentV3 = body({
  businessId: BusinessId('businessId'),
  itemId: ItemId,
  name: PlaylistName,
  date: ClientDate,
}).openapi('NewPlaylistWithContentV3');
export type NewPlaylistWithContentV3 = z.infer<typeof NewPlaylistWithContentV3>;

export const NewMediaForPlaylistV3 = body({ itemId: ItemId, date: ClientDate }).openapi('NewMediaForPlaylistV3');
export type NewMediaForPlaylistV3 = z.infer<typeof NewMediaForPlaylistV3>;

/** Body of the bulk `PUT /api/playlist/v3/{businessId}/bookmarks`. */
export const NewMediaForPlaylistV3List = z
  .array(NewMediaForPlaylistV3, {
    error: (issue) =>
      issue.input === undefined ? 'a JSON array body is required' : 'the body must be a JSON array of NewMediaForPlaylistV3',
  })
  .max(PLAYLIST_LIMITS.maxBulkItems, `at most ${PLAYLIST_LIMITS.maxBulkItems} items per request`)
  .openapi('NewMediaForPlaylistV3List');
export type NewMediaForPlaylistV3List = z.infer<typeof NewMediaForPlaylistV3List>;

export const PlaylistAttributesV3 = body({ name: PlaylistName }).openapi('PlaylistAttributesV3');
export type PlaylistAttributesV3 = z.infer<typeof PlaylistAttributesV3>;

// ---- a playlist's fields, and the answers -------------------------------------------------------------------

/**
 * A bookmark's fields, declared once: playlist-svc's state, its snapshot and the read model's documents hold them
 * under these names, and the v3 answer shows them (`BookmarkV3`); v2 calls `itemId` `media_id` (`Bookmark`).
 */
export const BookmarkFields = z.object({ id: z.number(), itemId: z.string(), date: z.number() });
export type BookmarkFields = z.infer<typeof BookmarkFields>;

/**
 * A playlist's own fields, declared once (its bookmarks are beside them). playlist-svc's state and snapshot hold them
 * under these names (apps/playlist-svc/src/domain), the read model's documents too (two of them under older names:
 * projections/playlists.ts). The v3 answers show them under these names: the list every field but `created`, the full
 * playlist every field but `created` and `lastUpdate`. v2's answers are the old API's own shapes, below. Adding one:
 * docs/contributing.md, "Add a field".
 */
export const PlaylistFields = z.object({
  id: z.string(),
  businessId: z.string(),
  name: z.string(),
  type: PlaylistType,
  created: z.number(),
  lastUpdate: z.number(),
});
export type PlaylistFields = z.infer<typeof PlaylistFields>;

// The answers, built from the declarations above (a few fields with a description for the OpenAPI document). An
// answer's properties are in the order its schema has them, which is the order of its bytes: playlist-svc makes each
// answer in its schema's order (`answerOf`), so the order here is the wire format's; keep it.

const BookmarkId = z.number().int().openapi({ description: 'technical id (int32), a per-user sequence; deletes the bookmark' });
const BookmarkDate = EpochMillis.openapi({ description: 'when the item was added (ms since the epoch)' });
const LastUpdate = EpochMillis.openapi({ description: 'server time of the last change to the playlist or its content' });

/** v3's bookmark: its fields, the date and the id first. */
export const BookmarkV3 = z
  .object({ date: BookmarkDate, id: BookmarkId, ...BookmarkFields.omit({ date: true, id: true }).shape })
  .openapi('BookmarkV3');
export type BookmarkV3 = z.infer<typeof BookmarkV3>;

/** v2's bookmark: `itemId` is `media_id` there. */
export const Bookmark = z.object({ date: BookmarkDate, id: BookmarkId, media_id: BookmarkFields.shape.itemId }).openapi('Bookmark');
export type Bookmark = z.infer<typeof Bookmark>;

/** v3's playlist with its bookmarks: the business id first, then every field but `created` and `lastUpdate`. */
export const FullPlaylistV3 = z
  .object({
    bookmarks: z.array(BookmarkV3).openapi({ description: 'newest first' }),
    businessId: PlaylistFields.shape.businessId.openapi({ description: 'the technical id when the playlist was created without one (v2)' }),
    ...PlaylistFields.omit({ businessId: true, created: true, lastUpdate: true }).shape,
  })
  .openapi('FullPlaylistV3');
export type FullPlaylistV3 = z.infer<typeof FullPlaylistV3>;

/** v3's playlist in the list: its fields but `created`, then the count of its bookmarks, `lastUpdate` last. */
export const PlaylistMetaDataV3 = z
  .object({
    ...PlaylistFields.omit({ created: true, lastUpdate: true }).shape,
    bookmarksCount: z.number().int(),
    lastUpdate: LastUpdate,
  })
  .openapi('PlaylistMetaDataV3');
export type PlaylistMetaDataV3 = z.infer<typeof PlaylistMetaDataV3>;

/** v2's names of a playlist's fields, and `system` for `type: watch_later`; v2 shows no business id. */
const SystemPlaylist = z.boolean().openapi({ description: 'true for the watch-later playlist' });

export const FullPlaylist = z
  .object({
    bookmarks: z.array(Bookmark).openapi({ description: 'newest first' }),
    id: PlaylistFields.shape.id,
    name: PlaylistFields.shape.name,
    system: SystemPlaylist,
  })
  .openapi('FullPlaylist');
export type FullPlaylist = z.infer<typeof FullPlaylist>;

export const PlaylistMetaData = z
  .object({
    id: PlaylistFields.shape.id,
    name: PlaylistFields.shape.name,
    system: SystemPlaylist,
    bookmarks_count: z.number().int(),
    last_update: LastUpdate,
  })
  .openapi('PlaylistMetaData');
export type PlaylistMetaData = z.infer<typeof PlaylistMetaData>;

export const BookmarksIds = z
  .object({ bookmark_id: BookmarkId, playlist_id: z.string().openapi({ description: 'technical id of the new playlist' }) })
  .openapi('BookmarksIds');
export type BookmarksIds = z.infer<typeof BookmarksIds>;

export const RetrievedPlaylists = z
  .object({ playlists: z.array(PlaylistMetaData).openapi({ description: 'the system playlist first, then by creation' }) })
  .openapi('RetrievedPlaylists');
export type RetrievedPlaylists = z.infer<typeof RetrievedPlaylists>;

export const RetrievedPlaylistsV3 = z
  .object({ playlists: z.array(PlaylistMetaDataV3).openapi({ description: 'watch later first, then by creation' }) })
  .openapi('RetrievedPlaylistsV3');
export type RetrievedPlaylistsV3 = z.infer<typeof RetrievedPlaylistsV3>;

// ---- path and query parameters -----------------------------------------------------------------------------

export const PlaylistsV2Query = z
  .object({
    withSystemDefaultPlaylistName: z
      .string({ error: 'withSystemDefaultPlaylistName must be given once' })
      .min(1, 'withSystemDefaultPlaylistName must not be empty')
      .max(PLAYLIST_LIMITS.maxNameLength, `withSystemDefaultPlaylistName is at most ${PLAYLIST_LIMITS.maxNameLength} characters`)
      .regex(NO_CONTROL_CHARACTERS, 'withSystemDefaultPlaylistName must not contain control characters')
      .optional()
      .openapi({ description: 'the name under which the system (watch-later) playlist is listed in this answer' }),
  })
  .openapi('PlaylistsV2Query');
export type PlaylistsV2Query = z.infer<typeof PlaylistsV2Query>;

/** v2 addresses a playlist by technical id; the spec calls the parameter `playlistId`, or `playlist_id` on delete. */
export const PlaylistIdParam = z.object({ playlistId: idText('playlistId') });
export const PlaylistIdParamOfDelete = z.object({ playlist_id: idText('playlist_id') });
export const PlaylistBusinessIdParam = z.object({ playlistBusinessId: BusinessId('playlistBusinessId') });

const int32Text = pathInt32;

/** A bookmark's technical id in the path: v2 calls it `bookmarks_id`, v3 `bookmarkId`. */
export const BookmarkIdParamV2 = z.object({ bookmarks_id: int32Text('bookmarks_id') });
export const BookmarkIdParamV3 = z.object({ bookmarkId: int32Text('bookmarkId') });

const commaList = <T extends z.ZodType<unknown, string>>(field: string, item: T) =>
  z
    .string({ error: `${field} must be given once, as a comma-separated list` })
    .transform((s) => s.split(',').map((x) => x.trim()))
    .refine((parts) => parts.some(Boolean), `${field} must list at least one value`)
    .transform((parts) => parts.filter(Boolean))
    .refine((parts) => parts.length <= PLAYLIST_LIMITS.maxIdsPerQuery, `at most ${PLAYLIST_LIMITS.maxIdsPerQuery} values in ${field}`)
    .pipe(z.array(item));

/**
 * The comma lists' rule as a pattern for the OpenAPI document: entries each an `item` or blank (blank ones
 * are skipped), at least one `item`. (The most of maxIdsPerQuery entries is in the description: a bounded
 * repetition makes the pattern too large for fuzzers to use.)
 */
const BLANK = '[\\u0009-\\u000d\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]';
const ID_CHAR = '[^,\\u0000-\\u0020\\u007f\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]';
const commaListPattern = (item: string, blank: string) => `^(?:${blank},)*${item}(?:,(?:${item}|${blank}))*$`;

export const DeleteBookmarksQuery = z
  .object({
    ids: commaList('ids', int32Text('ids'))
      .optional()
      .openapi({
        type: 'string',
        pattern: commaListPattern(`${BLANK}*${INT32_DIGITS}${BLANK}*`, `${BLANK}*`),
        description: `comma-separated bookmark ids (int32), at most ${PLAYLIST_LIMITS.maxIdsPerQuery}`,
      }),
    mediaIds: commaList('mediaIds', idText('mediaIds'))
      .optional()
      .openapi({
        type: 'string',
        pattern: commaListPattern(
          `${BLANK}*${ID_CHAR}(?:[^,\\u0000-\\u001f\\u007f]{0,${PLAYLIST_LIMITS.maxIdLength - 2}}${ID_CHAR})?${BLANK}*`,
          `${BLANK}*`,
        ),
        description: `comma-separated item ids (business ids of the media), at most ${PLAYLIST_LIMITS.maxIdsPerQuery}`,
      }),
  })
  .openapi('DeleteBookmarksQuery', { description: 'neither: delete every bookmark; one or both: delete the bookmarks matching either' });
export type DeleteBookmarksQuery = z.infer<typeof DeleteBookmarksQuery>;

// ---- routes --------------------------------------------------------------------------------------------------

const notFound = { 404: problem("no such playlist or bookmark (another user's playlists are never found)") };
const conflict = { 429: problem('the playlists kept changing under concurrent writes; see Retry-After') };
const limits = {
  400: problem('invalid input; `errors` names each offending field'),
  ...quotaExceeded(
    `by default ${PLAYLIST_LIMITS.maxPlaylists} playlists per user (PLAYLIST_MAX_PLAYLISTS) and ` +
      `${PLAYLIST_LIMITS.maxBookmarks} bookmarks per playlist (PLAYLIST_MAX_BOOKMARKS)`,
  ),
};
const watchLater = { 409: problem('the watch-later playlist cannot be deleted') };
const v2 = ['playlist v2'];
const v3 = ['playlist v3'];

/** playlist-svc: one data set, two API versions (v2 by technical id and `media_id`, v3 by business id and `itemId`). */
export const playlistApi = {
  v2: {
    list: defineRoute({
      operationId: 'listPlaylistsV2',
      method: 'get',
      path: '/api/playlist/v2',
      tags: v2,
      summary: 'List the playlists (metadata), the system playlist first',
      request: { query: PlaylistsV2Query },
      responses: { 200: json(RetrievedPlaylists, 'the playlists'), ...commonErrors },
    }),
    create: defineRoute({
      operationId: 'createPlaylistV2',
      method: 'post',
      path: '/api/playlist/v2',
      tags: v2,
      summary: 'Create an empty playlist',
      description: 'With `system: true` nothing is created: the answer is the system (watch-later) playlist, with 200.',
      request: { body: NewPlaylist },
      responses: {
        201: json(PlaylistMetaData, 'created'),
        200: json(PlaylistMetaData, 'the system playlist'),
        ...writeErrors,
        ...limits,
        ...conflict,
      },
    }),
    deleteAll: defineRoute({
      operationId: 'deleteAllPlaylistsV2',
      method: 'delete',
      path: '/api/playlist/v2',
      tags: v2,
      summary: 'Delete every playlist except the system (watch-later) playlist',
      responses: { 204: empty('deleted'), ...commonErrors, ...conflict },
    }),
    createWithBookmark: defineRoute({
      operationId: 'createPlaylistWithBookmarkV2',
      method: 'post',
      path: '/api/playlist/v2/new/bookmarks',
      tags: v2,
      summary: 'Create a playlist holding one media',
      request: { body: NewPlaylistWithContent },
      responses: { 201: json(BookmarksIds, 'the new playlist and bookmark'), ...writeErrors, ...limits, ...conflict },
    }),
    read: defineRoute({
      operationId: 'getPlaylistV2',
      method: 'get',
      path: '/api/playlist/v2/{playlistId}/bookmarks',
      tags: v2,
      summary: 'A playlist with its bookmarks',
      request: { params: PlaylistIdParam },
      responses: { 200: json(FullPlaylist, 'the playlist'), ...commonErrors, ...notFound },
    }),
    addBookmark: defineRoute({
      operationId: 'addBookmarkV2',
      method: 'post',
      path: '/api/playlist/v2/{playlistId}/bookmarks',
      tags: v2,
      summary: 'Add a media (one bookmark per media: adding again answers the existing one)',
      request: { params: PlaylistIdParam, body: NewMediaForPlaylistV2 },
      responses: {
        201: json(Bookmark, 'added'),
        200: json(Bookmark, 'already in the playlist'),
        ...writeErrors,
        ...limits,
        ...notFound,
        ...conflict,
      },
    }),
    deleteBookmarks: defineRoute({
      operationId: 'deleteBookmarksV2',
      method: 'delete',
      path: '/api/playlist/v2/{playlistId}/bookmarks',
      tags: v2,
      summary: 'Delete every bookmark of a playlist',
      request: { params: PlaylistIdParam },
      responses: { 204: empty('emptied'), ...commonErrors, ...notFound, ...conflict },
    }),
    deleteBookmark: defineRoute({
      operationId: 'deleteBookmarkV2',
      method: 'delete',
      path: '/api/playlist/v2/{playlistId}/bookmarks/{bookmarks_id}',
      tags: v2,
      summary: 'Delete one bookmark',
      request: { params: PlaylistIdParam.merge(BookmarkIdParamV2) },
      responses: { 204: empty('deleted'), ...commonErrors, ...notFound, ...conflict },
    }),
    delete: defineRoute({
      operationId: 'deletePlaylistV2',
      method: 'delete',
      path: '/api/playlist/v2/{playlist_id}',
      tags: v2,
      summary: 'Delete a playlist',
      request: { params: PlaylistIdParamOfDelete },
      responses: { 204: empty('deleted'), ...commonErrors, ...notFound, ...watchLater, ...conflict },
    }),
  },
  v3: {
    list: defineRoute({
      operationId: 'listPlaylistsV3',
      method: 'get',
      path: '/api/playlist/v3',
      tags: v3,
      summary: 'List the playlists (metadata), watch later first',
      responses: { 200: json(RetrievedPlaylistsV3, 'the playlists'), ...commonErrors },
    }),
    deleteAll: defineRoute({
      operationId: 'deleteAllPlaylistsV3',
      method: 'delete',
      path: '/api/playlist/v3',
      tags: v3,
      summary: 'Delete every playlist except watch later',
      responses: { 204: empty('deleted'), ...commonErrors, ...conflict },
    }),
    createWithBookmark: defineRoute({
      operationId: 'createPlaylistWithBookmarkV3',
      method: 'post',
      path: '/api/playlist/v3/new/bookmarks',
      tags: v3,
      summary: 'Create a playlist holding one item',
      description: 'When a playlist with that business id exists, it takes the name and the item is added to it (idempotent).',
      request: { body: NewPlaylistWithContentV3 },
      responses: {
        201: json(BookmarkV3, 'created'),
        200: json(BookmarkV3, 'playlist and item were there already'),
        ...writeErrors,
        ...limits,
        ...conflict,
      },
    }),
    read: defineRoute({
      operationId: 'getPlaylistV3',
      method: 'get',
      path: '/api/playlist/v3/{playlistBusinessId}',
      tags: v3,
      summary: 'A playlist with its bookmarks',
      request: { params: PlaylistBusinessIdParam },
      responses: { 200: json(FullPlaylistV3, 'the playlist'), ...commonErrors, ...notFound },
    }),
    save: defineRoute({
      operationId: 'savePlaylistV3',
      method: 'post',
      path: '/api/playlist/v3/{playlistBusinessId}',
      tags: v3,
      summary: 'Create an empty playlist, or rename an existing one',
      request: { params: PlaylistBusinessIdParam, body: PlaylistAttributesV3 },
      responses: {
        201: json(PlaylistMetaDataV3, 'created'),
        200: json(PlaylistMetaDataV3, 'updated'),
        ...writeErrors,
        ...limits,
        ...conflict,
      },
    }),
    delete: defineRoute({
      operationId: 'deletePlaylistV3',
      method: 'delete',
      path: '/api/playlist/v3/{playlistBusinessId}',
      tags: v3,
      summary: 'Delete a playlist',
      request: { params: PlaylistBusinessIdParam },
      responses: { 204: empty('deleted'), ...commonErrors, ...notFound, ...watchLater, ...conflict },
    }),
    addBookmark: defineRoute({
      operationId: 'addBookmarkV3',
      method: 'post',
      path: '/api/playlist/v3/{playlistBusinessId}/bookmarks',
      tags: v3,
      summary: 'Add an item (one bookmark per item: adding again answers the existing one)',
      request: { params: PlaylistBusinessIdParam, body: NewMediaForPlaylistV3 },
      responses: {
        201: json(BookmarkV3, 'added'),
        200: json(BookmarkV3, 'already in the playlist'),
        ...writeErrors,
        ...limits,
        ...notFound,
        ...conflict,
      },
    }),
    addBookmarks: defineRoute({
      operationId: 'addBookmarksV3',
      method: 'put',
      path: '/api/playlist/v3/{playlistBusinessId}/bookmarks',
      tags: v3,
      summary: 'Add several items at once (all or none)',
      description: 'Answers the bookmark of each entry, in the order sent; items already in the playlist keep their bookmark.',
      request: { params: PlaylistBusinessIdParam, body: NewMediaForPlaylistV3List },
      responses: { 200: json(z.array(BookmarkV3), 'the bookmarks of the items sent'), ...writeErrors, ...limits, ...notFound, ...conflict },
    }),
    deleteBookmarks: defineRoute({
      operationId: 'deleteBookmarksV3',
      method: 'delete',
      path: '/api/playlist/v3/{playlistBusinessId}/bookmarks',
      tags: v3,
      summary: 'Delete every bookmark, or those named by ids and/or mediaIds',
      request: { params: PlaylistBusinessIdParam, query: DeleteBookmarksQuery },
      responses: { 204: empty('deleted'), ...commonErrors, ...notFound, ...conflict },
    }),
    deleteBookmark: defineRoute({
      operationId: 'deleteBookmarkV3',
      method: 'delete',
      path: '/api/playlist/v3/{playlistBusinessId}/bookmarks/{bookmarkId}',
      tags: v3,
      summary: 'Delete one bookmark',
      request: { params: PlaylistBusinessIdParam.merge(BookmarkIdParamV3) },
      responses: { 204: empty('deleted'), ...commonErrors, ...notFound, ...conflict },
    }),
  },
};
