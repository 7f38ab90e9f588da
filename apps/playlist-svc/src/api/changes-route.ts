import { type PlaylistChange, type PlaylistChangesPage, PlaylistChangesQuery } from '@udp/contracts';
import { type InternalReads, parseInput } from '@udp/http-kit';
import type { Collection } from '@udp/readmodel';
import { viewOfDocument } from '../projections/playlist-queries';
import type { PlaylistDocument } from '../projections/playlists';
import { fullPlaylistV3 } from './routes-v3';

/**
 * What the gateway's live sync pulls (docs/live-sync.md): the caller's playlists changed at or after `since` (a stream
 * revision), oldest change first. Each event of a user's playlists stream changes one playlist document, which keeps
 * the revision of its last change (deleted ones stay as tombstones), so "changed at or after p" is a selection of the
 * documents, and the position after each is its revision + 1: a resume from it is exactly once. Internal: the gateway
 * answers 404 for /internal. An internal read: its route over HTTP, a call in process for the embedded gateway.
 */
export function playlistChanges(documents: Collection<PlaylistDocument>): InternalReads {
  return {
    '/internal/playlist/changes': async (userId, query) => {
      const { since } = parseInput(PlaylistChangesQuery, query, 'query');
      const all = await documents.find({ userId }, { sort: { revision: 1 } });
      const applied = all.length === 0 ? 0 : all[all.length - 1].revision + 1;
      // A position past what is applied is not of this history of the user (erased and begun again): from the beginning.
      const from = since === undefined ? applied : since > applied ? 0 : since;
      const changes = all
        .filter((doc) => doc.revision >= from)
        .map((doc) => ({ playlist: playlistChange(doc), position: doc.revision + 1 }));
      return { changes, applied } satisfies PlaylistChangesPage;
    },
  };
}

function playlistChange(doc: PlaylistDocument): PlaylistChange {
  if (doc.deleted) return { id: doc.playlistId, businessId: doc.businessId, deleted: true };
  return { ...fullPlaylistV3(viewOfDocument(doc)), deleted: false };
}
