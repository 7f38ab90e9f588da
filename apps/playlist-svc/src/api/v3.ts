import { Router } from 'express';
import {
  BookmarkIdParamV3,
  DeleteBookmarksQuery,
  NewMediaForPlaylistV3,
  NewMediaForPlaylistV3List,
  NewPlaylistWithContentV3,
  PlaylistAttributesV3,
  PlaylistBusinessIdParam,
  type RetrievedPlaylistsV3,
} from '@udp/contracts';
import { notFoundError, parseInput, userIdOf, sendJsonConditionally } from '@udp/http-kit';
import { listPlaylists, playlistByBusinessId } from '../projections/playlist-queries';
import { bookmarkV3, fullPlaylistV3, metaDataV3, viewOf } from './views';
import type { PlaylistRouteDeps } from './v2';

/** `/api/playlist/v3`: playlists by business id (`watch_later` is the watch-later playlist), items by `itemId`. */
export function playlistV3Routes({ execute, documents, newId }: PlaylistRouteDeps): Router {
  const router = Router();
  const base = '/api/playlist/v3';
  const businessIdOf = (params: unknown) => parseInput(PlaylistBusinessIdParam, params, 'path').playlistBusinessId;

  router.get(base, async (req, res) => {
    const playlists = await listPlaylists(documents, userIdOf(res));
    const answer: RetrievedPlaylistsV3 = { playlists: playlists.map(metaDataV3) };
    sendJsonConditionally(req, res, answer);
  });

  router.delete(base, async (_req, res) => {
    await execute(userIdOf(res), { type: 'DeleteAllPlaylists', data: {} });
    res.status(204).end();
  });

  /** Creates the playlist with its first item; a playlist with that business id takes the name and the item. */
  router.post(`${base}/new/bookmarks`, async (req, res) => {
    const { businessId, itemId, name, date } = parseInput(NewPlaylistWithContentV3, req.body, 'body');
    const outcome = await execute(userIdOf(res), {
      type: 'SavePlaylist',
      data: { businessId, newPlaylistId: newId(), name, items: [{ itemId, date }] },
    });
    const playlist = outcome.playlist({ businessId });
    res.status(outcome.addedItem(playlist.id, itemId) ? 201 : 200).json(bookmarkV3(playlist.bookmarks.get(itemId)!));
  });

  router.get(`${base}/:playlistBusinessId`, async (req, res) => {
    const businessId = businessIdOf(req.params);
    const playlist = await playlistByBusinessId(documents, userIdOf(res), businessId);
    if (!playlist) throw notFoundError(`no playlist with business id ${businessId}`);
    res.json(fullPlaylistV3(playlist));
  });

  /** Creates an empty playlist under this business id, or renames the existing one. */
  router.post(`${base}/:playlistBusinessId`, async (req, res) => {
    const businessId = businessIdOf(req.params);
    const { name } = parseInput(PlaylistAttributesV3, req.body, 'body');
    const outcome = await execute(userIdOf(res), { type: 'SavePlaylist', data: { businessId, newPlaylistId: newId(), name, items: [] } });
    // Watch later exists for every user (its first write only records it), so it is never "created" here.
    const created = outcome.events.some((e) => e.type === 'PlaylistCreated' && e.data.playlistType === 'standard');
    res.status(created ? 201 : 200).json(metaDataV3(viewOf(outcome.playlist({ businessId }))));
  });

  router.delete(`${base}/:playlistBusinessId`, async (req, res) => {
    const businessId = businessIdOf(req.params);
    await execute(userIdOf(res), { type: 'DeletePlaylist', data: { playlist: { businessId } } });
    res.status(204).end();
  });

  router.post(`${base}/:playlistBusinessId/bookmarks`, async (req, res) => {
    const businessId = businessIdOf(req.params);
    const { itemId, date } = parseInput(NewMediaForPlaylistV3, req.body, 'body');
    const outcome = await execute(userIdOf(res), { type: 'AddBookmarks', data: { playlist: { businessId }, items: [{ itemId, date }] } });
    const playlist = outcome.playlist({ businessId });
    res.status(outcome.addedItem(playlist.id, itemId) ? 201 : 200).json(bookmarkV3(playlist.bookmarks.get(itemId)!));
  });

  /** Bulk add, all or none: answers the bookmark of each entry in the order sent. */
  router.put(`${base}/:playlistBusinessId/bookmarks`, async (req, res) => {
    const businessId = businessIdOf(req.params);
    const items = parseInput(NewMediaForPlaylistV3List, req.body, 'body');
    const outcome = await execute(userIdOf(res), { type: 'AddBookmarks', data: { playlist: { businessId }, items } });
    const { bookmarks } = outcome.playlist({ businessId });
    res.status(200).json(items.map(({ itemId }) => bookmarkV3(bookmarks.get(itemId)!)));
  });

  /** Deletes every bookmark, or (with `ids` and/or `mediaIds`) those matching either list. */
  router.delete(`${base}/:playlistBusinessId/bookmarks`, async (req, res) => {
    const businessId = businessIdOf(req.params);
    const { ids, mediaIds } = parseInput(DeleteBookmarksQuery, req.query, 'query');
    await execute(userIdOf(res), { type: 'RemoveBookmarks', data: { playlist: { businessId }, bookmarkIds: ids, itemIds: mediaIds } });
    res.status(204).end();
  });

  router.delete(`${base}/:playlistBusinessId/bookmarks/:bookmarkId`, async (req, res) => {
    const businessId = businessIdOf(req.params);
    const { bookmarkId } = parseInput(BookmarkIdParamV3, req.params, 'path');
    await execute(userIdOf(res), { type: 'RemoveBookmark', data: { playlist: { businessId }, bookmarkId } });
    res.status(204).end();
  });

  return router;
}
