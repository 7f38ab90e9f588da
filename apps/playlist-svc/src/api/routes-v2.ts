import { Router } from 'express';
import {
  WATCH_LATER,
  playlistApi,
  type Bookmark,
  type BookmarksIds,
  type FullPlaylist,
  type PlaylistMetaData,
  type RetrievedPlaylists,
} from '@udp/contracts';
import { mountRoute, notFoundError, userIdOf, sendJsonConditionally } from '@udp/http-kit';
import { type PlaylistView, listPlaylists, newestFirst, playlistById, viewOf, viewOfDocument } from '../projections/playlist-queries';
import type { BookmarkEntry } from '../projections/playlists';
import { type PlaylistRouteDeps, addedBookmark } from './routes';
import { findPlaylist } from '../domain/decider';

const api = playlistApi.v2;

/** `/api/playlist/v2`: playlists by technical id, media by `media_id`; the watch-later playlist is `system`. */
export function playlistV2Routes({ handle, documents, newId }: PlaylistRouteDeps): Router {
  const router = Router();

  mountRoute(router, api.list, async ({ query }, req, res) => {
    const playlists = await listPlaylists(documents, userIdOf(res));
    const answer: RetrievedPlaylists = {
      playlists: playlists.map((p) => metaDataV2(viewOfDocument(p), query.withSystemDefaultPlaylistName)),
    };
    sendJsonConditionally(req, res, answer);
  });

  mountRoute(router, api.create, async ({ body }, _req, res) => {
    if (body.system) {
      // The system playlist exists for every user: asking for it answers it as it is.
      const outcome = await handle(userIdOf(res), { type: 'EnsureWatchLater', data: {} });
      res.status(200).json(metaDataV2(viewOf(findPlaylist(outcome.newState, { id: WATCH_LATER })!)));
      return;
    }
    const id = newId();
    const outcome = await handle(userIdOf(res), {
      type: 'SavePlaylist',
      data: { businessId: id, newPlaylistId: id, name: body.name, items: [] },
    });
    res.status(201).json(metaDataV2(viewOf(findPlaylist(outcome.newState, { id })!)));
  });

  mountRoute(router, api.deleteAll, async (_input, _req, res) => {
    await handle(userIdOf(res), { type: 'DeleteAllPlaylists', data: {} });
    res.status(204).end();
  });

  mountRoute(router, api.createWithBookmark, async ({ body }, _req, res) => {
    const id = newId();
    const outcome = await handle(userIdOf(res), {
      type: 'SavePlaylist',
      data: { businessId: id, newPlaylistId: id, name: body.name, items: [{ itemId: body.media_id }] },
    });
    const answer: BookmarksIds = { bookmark_id: findPlaylist(outcome.newState, { id })!.bookmarks.get(body.media_id)!.id, playlist_id: id };
    res.status(201).json(answer);
  });

  mountRoute(router, api.read, async ({ params: { playlistId } }, _req, res) => {
    const playlist = await playlistById(documents, userIdOf(res), playlistId);
    if (!playlist) throw notFoundError(`no playlist with id ${playlistId}`);
    res.json(fullPlaylistV2(viewOfDocument(playlist)));
  });

  mountRoute(router, api.addBookmark, async ({ params: { playlistId }, body }, _req, res) => {
    const outcome = await handle(userIdOf(res), {
      type: 'AddBookmarks',
      data: { playlist: { id: playlistId }, items: [{ itemId: body.media_id, date: body.date }] },
    });
    const bookmark = findPlaylist(outcome.newState, { id: playlistId })!.bookmarks.get(body.media_id)!;
    res.status(addedBookmark(outcome.newEvents, playlistId, body.media_id) ? 201 : 200).json(bookmarkV2(bookmark));
  });

  mountRoute(router, api.deleteBookmarks, async ({ params: { playlistId } }, _req, res) => {
    await handle(userIdOf(res), { type: 'RemoveBookmarks', data: { playlist: { id: playlistId } } });
    res.status(204).end();
  });

  mountRoute(router, api.deleteBookmark, async ({ params: { playlistId, bookmarks_id } }, _req, res) => {
    await handle(userIdOf(res), { type: 'RemoveBookmark', data: { playlist: { id: playlistId }, bookmarkId: bookmarks_id } });
    res.status(204).end();
  });

  mountRoute(router, api.delete, async ({ params: { playlist_id } }, _req, res) => {
    await handle(userIdOf(res), { type: 'DeletePlaylist', data: { playlist: { id: playlist_id } } });
    res.status(204).end();
  });

  return router;
}

// v2 shapes, the old API's own: its names of the fields (`media_id` is `itemId`, `last_update` `lastUpdate`), and the
// watch-later playlist as `system`. They show no field added since v3.

const bookmarkV2 = (b: BookmarkEntry): Bookmark => ({ date: b.date, id: b.id, media_id: b.itemId });

const fullPlaylistV2 = (p: PlaylistView): FullPlaylist => ({
  bookmarks: newestFirst(p.bookmarks).map(bookmarkV2),
  id: p.id,
  name: p.name,
  system: p.type === 'watch_later',
});

/** `systemName` (v2 `withSystemDefaultPlaylistName`) is the name the system playlist is listed under. */
const metaDataV2 = (p: PlaylistView, systemName?: string): PlaylistMetaData => ({
  id: p.id,
  name: p.type === 'watch_later' && systemName !== undefined ? systemName : p.name,
  system: p.type === 'watch_later',
  bookmarks_count: p.bookmarks.length,
  last_update: p.lastUpdate,
});
