import { Router } from 'express';
import { BookmarkV3, FullPlaylistV3, PlaylistMetaDataV3, playlistApi, type RetrievedPlaylistsV3 } from '@udp/contracts';
import { mountRoute, notFoundError, userIdOf, sendJsonConditionally } from '@udp/http-kit';
import {
  type PlaylistView,
  answerOf,
  listPlaylists,
  newestFirst,
  playlistByBusinessId,
  viewOf,
  viewOfDocument,
} from '../projections/playlist-queries';
import { type PlaylistRouteDeps, addedBookmark } from './routes';
import { findPlaylist } from '../domain/decider';

const api = playlistApi.v3;

/** `/api/playlist/v3`: playlists by business id (`watch_later` is the watch-later playlist), items by `itemId`. */
export function playlistV3Routes({ handle, documents, newId }: PlaylistRouteDeps): Router {
  const router = Router();

  mountRoute(router, api.list, async (_input, req, res) => {
    const playlists = await listPlaylists(documents, userIdOf(res));
    const answer: RetrievedPlaylistsV3 = { playlists: playlists.map((p) => metaDataV3(viewOfDocument(p))) };
    sendJsonConditionally(req, res, answer);
  });

  mountRoute(router, api.deleteAll, async (_input, _req, res) => {
    await handle(userIdOf(res), { type: 'DeleteAllPlaylists', data: {} });
    res.status(204).end();
  });

  /** Creates the playlist with its first item; a playlist with that business id takes the name and the item. */
  mountRoute(router, api.createWithBookmark, async ({ body: { businessId, itemId, name, date } }, _req, res) => {
    const outcome = await handle(userIdOf(res), {
      type: 'SavePlaylist',
      data: { businessId, newPlaylistId: newId(), name, items: [{ itemId, date }] },
    });
    const playlist = findPlaylist(outcome.newState, { businessId })!;
    res.status(addedBookmark(outcome.newEvents, playlist.id, itemId) ? 201 : 200).json(bookmarkV3(playlist.bookmarks.get(itemId)!));
  });

  mountRoute(router, api.read, async ({ params: { playlistBusinessId: businessId } }, _req, res) => {
    const playlist = await playlistByBusinessId(documents, userIdOf(res), businessId);
    if (!playlist) throw notFoundError(`no playlist with business id ${businessId}`);
    res.json(fullPlaylistV3(viewOfDocument(playlist)));
  });

  /** Creates an empty playlist under this business id, or renames the existing one. */
  mountRoute(router, api.save, async ({ params: { playlistBusinessId: businessId }, body: { name } }, _req, res) => {
    const outcome = await handle(userIdOf(res), { type: 'SavePlaylist', data: { businessId, newPlaylistId: newId(), name, items: [] } });
    // Watch later exists for every user (its first write only records it), so it is never "created" here.
    const created = outcome.newEvents.some((e) => e.type === 'PlaylistCreated' && e.data.playlistType === 'standard');
    res.status(created ? 201 : 200).json(metaDataV3(viewOf(findPlaylist(outcome.newState, { businessId })!)));
  });

  mountRoute(router, api.delete, async ({ params: { playlistBusinessId: businessId } }, _req, res) => {
    await handle(userIdOf(res), { type: 'DeletePlaylist', data: { playlist: { businessId } } });
    res.status(204).end();
  });

  mountRoute(router, api.addBookmark, async ({ params: { playlistBusinessId: businessId }, body: { itemId, date } }, _req, res) => {
    const outcome = await handle(userIdOf(res), { type: 'AddBookmarks', data: { playlist: { businessId }, items: [{ itemId, date }] } });
    const playlist = findPlaylist(outcome.newState, { businessId })!;
    res.status(addedBookmark(outcome.newEvents, playlist.id, itemId) ? 201 : 200).json(bookmarkV3(playlist.bookmarks.get(itemId)!));
  });

  /** Bulk add, all or none: answers the bookmark of each entry in the order sent. */
  mountRoute(router, api.addBookmarks, async ({ params: { playlistBusinessId: businessId }, body: items }, _req, res) => {
    const outcome = await handle(userIdOf(res), { type: 'AddBookmarks', data: { playlist: { businessId }, items } });
    const { bookmarks } = findPlaylist(outcome.newState, { businessId })!;
    res.status(200).json(items.map(({ itemId }) => bookmarkV3(bookmarks.get(itemId)!)));
  });

  /** Deletes every bookmark, or (with `ids` and/or `mediaIds`) those matching either list. */
  mountRoute(router, api.deleteBookmarks, async ({ params: { playlistBusinessId: businessId }, query }, _req, res) => {
    await handle(userIdOf(res), {
      type: 'RemoveBookmarks',
      data: { playlist: { businessId }, bookmarkIds: query.ids, itemIds: query.mediaIds },
    });
    res.status(204).end();
  });

  mountRoute(router, api.deleteBookmark, async ({ params: { playlistBusinessId: businessId, bookmarkId } }, _req, res) => {
    await handle(userIdOf(res), { type: 'RemoveBookmark', data: { playlist: { businessId }, bookmarkId } });
    res.status(204).end();
  });

  return router;
}

// v3 shapes: the playlist's fields under their declared names (libs/contracts/src/playlists.ts), as the schemas state them.

const bookmarkV3 = answerOf<BookmarkV3>(BookmarkV3);
const fullPlaylistV3Of = answerOf<FullPlaylistV3>(FullPlaylistV3);
const metaDataV3Of = answerOf<PlaylistMetaDataV3>(PlaylistMetaDataV3);

export const fullPlaylistV3 = (p: PlaylistView): FullPlaylistV3 =>
  fullPlaylistV3Of({ ...p, bookmarks: newestFirst(p.bookmarks).map(bookmarkV3) });

export const metaDataV3 = (p: PlaylistView): PlaylistMetaDataV3 => metaDataV3Of({ ...p, bookmarksCount: p.bookmarks.length });
