import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  Bookmark,
  BookmarkIdParamV2,
  BookmarkIdParamV3,
  BookmarksIds,
  PlaylistBusinessIdParam,
  PlaylistIdParam,
  PlaylistIdParamOfDelete,
  BookmarkV3,
  DeleteBookmarksQuery,
  FullPlaylist,
  FullPlaylistV3,
  NewMediaForPlaylistV2,
  NewMediaForPlaylistV3,
  NewMediaForPlaylistV3List,
  NewPlaylist,
  NewPlaylistWithContent,
  NewPlaylistWithContentV3,
  PLAYLIST_LIMITS,
  PlaylistAttributesV3,
  PlaylistMetaData,
  PlaylistMetaDataV3,
  PlaylistsV2Query,
  RetrievedPlaylists,
  RetrievedPlaylistsV3,
} from '../playlists';
import { z } from '../zod';
import { commonErrors, empty, json, problem, writeErrors } from './helpers';

export function registerPlaylists(registry: OpenAPIRegistry): void {
  const body = <T extends z.ZodType>(schema: T) => ({ body: { required: true, content: { 'application/json': { schema } } } });
  const notFound = { 404: problem("no such playlist or bookmark (another user's playlists are never found)") };
  const conflict = { 429: problem('the playlists kept changing under concurrent writes; see Retry-After') };
  const limits = {
    400: problem(
      `invalid input, or a limit reached (title "Limit Exceeded"): by default ${PLAYLIST_LIMITS.maxPlaylists} playlists per user and ` +
        `${PLAYLIST_LIMITS.maxBookmarks} bookmarks per playlist; \`errors\` names each offending field`,
    ),
  };
  const watchLater = { 409: problem('the watch-later playlist cannot be deleted') };
  // The schemas that validate the paths, so the document states the same rules.
  const playlistId = (name: 'playlistId' | 'playlist_id') => (name === 'playlistId' ? PlaylistIdParam : PlaylistIdParamOfDelete);
  const businessId = PlaylistBusinessIdParam;
  const bookmarkId = (name: 'bookmarks_id' | 'bookmarkId') => (name === 'bookmarks_id' ? BookmarkIdParamV2 : BookmarkIdParamV3);

  // ---- v2 ----
  const v2 = ['playlist v2'];
  registry.registerPath({
    method: 'get',
    path: '/api/playlist/v2',
    tags: v2,
    summary: 'List the playlists (metadata), the system playlist first',
    request: { query: PlaylistsV2Query },
    responses: { 200: json(RetrievedPlaylists, 'the playlists'), ...commonErrors },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/playlist/v2',
    tags: v2,
    summary: 'Create an empty playlist',
    description: 'With `system: true` nothing is created: the answer is the system (watch-later) playlist, with 200.',
    request: body(NewPlaylist),
    responses: {
      201: json(PlaylistMetaData, 'created'),
      200: json(PlaylistMetaData, 'the system playlist'),
      ...writeErrors,
      ...limits,
      ...conflict,
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/playlist/v2',
    tags: v2,
    summary: 'Delete every playlist except the system (watch-later) playlist',
    responses: { 204: empty('deleted'), ...commonErrors, ...conflict },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/playlist/v2/new/bookmarks',
    tags: v2,
    summary: 'Create a playlist holding one media',
    request: body(NewPlaylistWithContent),
    responses: { 201: json(BookmarksIds, 'the new playlist and bookmark'), ...writeErrors, ...limits, ...conflict },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/playlist/v2/{playlistId}/bookmarks',
    tags: v2,
    summary: 'A playlist with its bookmarks',
    request: { params: playlistId('playlistId') },
    responses: { 200: json(FullPlaylist, 'the playlist'), ...commonErrors, ...notFound },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/playlist/v2/{playlistId}/bookmarks',
    tags: v2,
    summary: 'Add a media (one bookmark per media: adding again answers the existing one)',
    request: { params: playlistId('playlistId'), ...body(NewMediaForPlaylistV2) },
    responses: {
      201: json(Bookmark, 'added'),
      200: json(Bookmark, 'already in the playlist'),
      ...writeErrors,
      ...limits,
      ...notFound,
      ...conflict,
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/playlist/v2/{playlistId}/bookmarks',
    tags: v2,
    summary: 'Delete every bookmark of a playlist',
    request: { params: playlistId('playlistId') },
    responses: { 204: empty('emptied'), ...commonErrors, ...notFound, ...conflict },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/playlist/v2/{playlistId}/bookmarks/{bookmarks_id}',
    tags: v2,
    summary: 'Delete one bookmark',
    request: { params: playlistId('playlistId').merge(bookmarkId('bookmarks_id')) },
    responses: { 204: empty('deleted'), ...commonErrors, ...notFound, ...conflict },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/playlist/v2/{playlist_id}',
    tags: v2,
    summary: 'Delete a playlist',
    request: { params: playlistId('playlist_id') },
    responses: { 204: empty('deleted'), ...commonErrors, ...notFound, ...watchLater, ...conflict },
  });

  // ---- v3 ----
  const v3 = ['playlist v3'];
  registry.registerPath({
    method: 'get',
    path: '/api/playlist/v3',
    tags: v3,
    summary: 'List the playlists (metadata), watch later first',
    responses: { 200: json(RetrievedPlaylistsV3, 'the playlists'), ...commonErrors },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/playlist/v3',
    tags: v3,
    summary: 'Delete every playlist except watch later',
    responses: { 204: empty('deleted'), ...commonErrors, ...conflict },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/playlist/v3/new/bookmarks',
    tags: v3,
    summary: 'Create a playlist holding one item',
    description: 'When a playlist with that business id exists, it takes the name and the item is added to it (idempotent).',
    request: body(NewPlaylistWithContentV3),
    responses: {
      201: json(BookmarkV3, 'created'),
      200: json(BookmarkV3, 'playlist and item were there already'),
      ...writeErrors,
      ...limits,
      ...conflict,
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/playlist/v3/{playlistBusinessId}',
    tags: v3,
    summary: 'A playlist with its bookmarks',
    request: { params: businessId },
    responses: { 200: json(FullPlaylistV3, 'the playlist'), ...commonErrors, ...notFound },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/playlist/v3/{playlistBusinessId}',
    tags: v3,
    summary: 'Create an empty playlist, or rename an existing one',
    request: { params: businessId, ...body(PlaylistAttributesV3) },
    responses: {
      201: json(PlaylistMetaDataV3, 'created'),
      200: json(PlaylistMetaDataV3, 'updated'),
      ...writeErrors,
      ...limits,
      ...conflict,
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/playlist/v3/{playlistBusinessId}',
    tags: v3,
    summary: 'Delete a playlist',
    request: { params: businessId },
    responses: { 204: empty('deleted'), ...commonErrors, ...notFound, ...watchLater, ...conflict },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/playlist/v3/{playlistBusinessId}/bookmarks',
    tags: v3,
    summary: 'Add an item (one bookmark per item: adding again answers the existing one)',
    request: { params: businessId, ...body(NewMediaForPlaylistV3) },
    responses: {
      201: json(BookmarkV3, 'added'),
      200: json(BookmarkV3, 'already in the playlist'),
      ...writeErrors,
      ...limits,
      ...notFound,
      ...conflict,
    },
  });
  registry.registerPath({
    method: 'put',
    path: '/api/playlist/v3/{playlistBusinessId}/bookmarks',
    tags: v3,
    summary: 'Add several items at once (all or none)',
    description: 'Answers the bookmark of each entry, in the order sent; items already in the playlist keep their bookmark.',
    request: { params: businessId, ...body(NewMediaForPlaylistV3List) },
    responses: { 200: json(z.array(BookmarkV3), 'the bookmarks of the items sent'), ...writeErrors, ...limits, ...notFound, ...conflict },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/playlist/v3/{playlistBusinessId}/bookmarks',
    tags: v3,
    summary: 'Delete every bookmark, or those named by ids and/or mediaIds',
    request: { params: businessId, query: DeleteBookmarksQuery },
    responses: { 204: empty('deleted'), ...commonErrors, ...notFound, ...conflict },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/playlist/v3/{playlistBusinessId}/bookmarks/{bookmarkId}',
    tags: v3,
    summary: 'Delete one bookmark',
    request: { params: businessId.merge(bookmarkId('bookmarkId')) },
    responses: { 204: empty('deleted'), ...commonErrors, ...notFound, ...conflict },
  });
}
