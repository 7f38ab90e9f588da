import { Router } from 'express';
import {
  BookmarkIdParamV2,
  NewMediaForPlaylistV2,
  NewPlaylist,
  NewPlaylistWithContent,
  PlaylistIdParam,
  PlaylistIdParamOfDelete,
  PlaylistsV2Query,
  WATCH_LATER,
  type BookmarksIds,
  type RetrievedPlaylists,
} from '@udp/contracts';
import { notFoundError, parseInput, userIdOf, sendJsonConditionally } from '@udp/http-kit';
import type { Collection } from '@udp/readmodel';
import { listPlaylists, playlistById } from '../projections/playlist-queries';
import type { PlaylistDocument } from '../projections/playlists';
import type { ExecutePlaylistCommand } from './commands';
import { bookmarkV2, fullPlaylistV2, metaDataV2, viewOf } from './views';

export interface PlaylistRouteDeps {
  execute: ExecutePlaylistCommand;
  documents: Collection<PlaylistDocument>;
  newId: () => string;
}

/** `/api/playlist/v2`: playlists by technical id, media by `media_id`; the watch-later playlist is `system`. */
export function playlistV2Routes({ execute, documents, newId }: PlaylistRouteDeps): Router {
  const router = Router();
  const base = '/api/playlist/v2';

  router.get(base, async (req, res) => {
    const { withSystemDefaultPlaylistName } = parseInput(PlaylistsV2Query, req.query, 'query');
    const playlists = await listPlaylists(documents, userIdOf(res));
    const answer: RetrievedPlaylists = { playlists: playlists.map((p) => metaDataV2(p, withSystemDefaultPlaylistName)) };
    sendJsonConditionally(req, res, answer);
  });

  router.post(base, async (req, res) => {
    const body = parseInput(NewPlaylist, req.body, 'body');
    if (body.system) {
      // The system playlist exists for every user: asking for it answers it as it is.
      const outcome = await execute(userIdOf(res), { type: 'EnsureWatchLater', data: {} });
      res.status(200).json(metaDataV2(viewOf(outcome.playlist({ id: WATCH_LATER }))));
      return;
    }
    const id = newId();
    const outcome = await execute(userIdOf(res), {
      type: 'SavePlaylist',
      data: { businessId: id, newPlaylistId: id, name: body.name, items: [] },
    });
    res.status(201).json(metaDataV2(viewOf(outcome.playlist({ id }))));
  });

  router.delete(base, async (_req, res) => {
    await execute(userIdOf(res), { type: 'DeleteAllPlaylists', data: {} });
    res.status(204).end();
  });

  router.post(`${base}/new/bookmarks`, async (req, res) => {
    const body = parseInput(NewPlaylistWithContent, req.body, 'body');
    const id = newId();
    const outcome = await execute(userIdOf(res), {
      type: 'SavePlaylist',
      data: { businessId: id, newPlaylistId: id, name: body.name, items: [{ itemId: body.media_id }] },
    });
    const answer: BookmarksIds = { bookmark_id: outcome.playlist({ id }).bookmarks.get(body.media_id)!.id, playlist_id: id };
    res.status(201).json(answer);
  });

  router.get(`${base}/:playlistId/bookmarks`, async (req, res) => {
    const { playlistId } = parseInput(PlaylistIdParam, req.params, 'path');
    const playlist = await playlistById(documents, userIdOf(res), playlistId);
    if (!playlist) throw notFoundError(`no playlist with id ${playlistId}`);
    res.json(fullPlaylistV2(playlist));
  });

  router.post(`${base}/:playlistId/bookmarks`, async (req, res) => {
    const { playlistId } = parseInput(PlaylistIdParam, req.params, 'path');
    const body = parseInput(NewMediaForPlaylistV2, req.body, 'body');
    const outcome = await execute(userIdOf(res), {
      type: 'AddBookmarks',
      data: { playlist: { id: playlistId }, items: [{ itemId: body.media_id, date: body.date }] },
    });
    const bookmark = outcome.playlist({ id: playlistId }).bookmarks.get(body.media_id)!;
    res.status(outcome.addedItem(playlistId, body.media_id) ? 201 : 200).json(bookmarkV2(bookmark));
  });

  router.delete(`${base}/:playlistId/bookmarks`, async (req, res) => {
    const { playlistId } = parseInput(PlaylistIdParam, req.params, 'path');
    await execute(userIdOf(res), { type: 'RemoveBookmarks', data: { playlist: { id: playlistId } } });
    res.status(204).end();
  });

  router.delete(`${base}/:playlistId/bookmarks/:bookmarks_id`, async (req, res) => {
    const { playlistId } = parseInput(PlaylistIdParam, req.params, 'path');
    const { bookmarks_id } = parseInput(BookmarkIdParamV2, req.params, 'path');
    await execute(userIdOf(res), { type: 'RemoveBookmark', data: { playlist: { id: playlistId }, bookmarkId: bookmarks_id } });
    res.status(204).end();
  });

  router.delete(`${base}/:playlist_id`, async (req, res) => {
    const { playlist_id } = parseInput(PlaylistIdParamOfDelete, req.params, 'path');
    await execute(userIdOf(res), { type: 'DeletePlaylist', data: { playlist: { id: playlist_id } } });
    res.status(204).end();
  });

  return router;
}
