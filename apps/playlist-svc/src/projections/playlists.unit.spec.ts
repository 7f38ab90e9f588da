import { ForeignEventError } from '@udp/eventsourcing';
import { projectionSpecification } from '@udp/test-system';
import { type PlaylistEvent, playlistsStream } from '../domain/aggregate';
import { listPlaylists, playlistByBusinessId, playlistById } from './playlist-queries';
import { PLAYLISTS_COLLECTION, playlistDocuments, playlistsProjection } from './playlists';

const history: PlaylistEvent[] = [
  {
    type: 'PlaylistCreated',
    data: { playlistId: 'watch_later', businessId: 'watch_later', name: 'Watch later', playlistType: 'watch_later', date: 1 },
  },
  { type: 'PlaylistCreated', data: { playlistId: 'u1', businessId: 'jazz', name: 'Jazz', playlistType: 'standard', date: 2 } },
  { type: 'BookmarkAdded', data: { playlistId: 'u1', bookmarkId: 1, itemId: 'a', date: 3, addedAt: 3 } },
  { type: 'BookmarkAdded', data: { playlistId: 'u1', bookmarkId: 2, itemId: 'b', date: 2, addedAt: 4 } },
  { type: 'PlaylistRenamed', data: { playlistId: 'u1', name: 'Jazz!', date: 5 } },
  { type: 'BookmarksRemoved', data: { playlistId: 'u1', bookmarkIds: [1], date: 6 } },
  { type: 'PlaylistCreated', data: { playlistId: 'u2', businessId: 'rock', name: 'Rock', playlistType: 'standard', date: 7 } },
  { type: 'BookmarkAdded', data: { playlistId: 'watch_later', bookmarkId: 3, itemId: 'w', date: 8, addedAt: 8 } },
  { type: 'PlaylistDeleted', data: { playlistId: 'u2', date: 9 } },
];

const spec = projectionSpecification(playlistsProjection);
const givenErinsPlaylists = () => spec.given(playlistsStream('erin'), history);

describe('playlists projection', () => {
  it('builds one document per playlist, with its bookmarks; a deleted playlist is a tombstone that queries skip', () =>
    givenErinsPlaylists().thenQuery(async (readModels) => {
      const documents = playlistDocuments(readModels);
      const list = await listPlaylists(documents, 'erin');
      expect(list.map((d) => [d.playlistId, d.name, d.bookmarks, d.lastUpdate])).toEqual([
        ['watch_later', 'Watch later', [{ id: 3, itemId: 'w', date: 8 }], 8],
        ['u1', 'Jazz!', [{ id: 2, itemId: 'b', date: 2 }], 6],
      ]);
      expect(await playlistById(documents, 'erin', 'u2')).toBeNull();
      expect(await playlistByBusinessId(documents, 'erin', 'rock')).toBeNull();
      expect(await documents.get('erin/u2')).toMatchObject({ deleted: true, bookmarks: [], revision: 8 });
      expect((await playlistByBusinessId(documents, 'erin', 'jazz'))?.playlistId).toBe('u1');
    }));

  it('changes nothing of a playlist after its deletion', () =>
    spec
      .given(playlistsStream('erin'), [...history, { type: 'PlaylistRenamed', data: { playlistId: 'u2', name: 'Pop', date: 10 } }])
      .then(PLAYLISTS_COLLECTION, (documents) =>
        expect(documents.find((d) => d._id === 'erin/u2')).toMatchObject({ deleted: true, name: 'Rock', revision: 8 }),
      ));

  it('is idempotent: replaying every event, or an older one after a newer, changes nothing', () =>
    givenErinsPlaylists().thenReplayingChangesNothing());

  it("keeps users apart, and answers a user's watch later before the user's first write", () =>
    givenErinsPlaylists().thenQuery(async (readModels) => {
      const documents = playlistDocuments(readModels);
      const fresh = await listPlaylists(documents, 'frank');
      expect(fresh.map((d) => [d.playlistId, d.businessId, d.playlistType, d.bookmarks])).toEqual([
        ['watch_later', 'watch_later', 'watch_later', []],
      ]);
      expect(await playlistById(documents, 'frank', 'u1')).toBeNull();
      expect((await playlistById(documents, 'frank', 'watch_later'))?.bookmarks).toEqual([]);
    }));

  it("refuses an event of another owner in a user's playlists", () =>
    spec.given({ id: playlistsStream('erin').id, owner: { userId: 'mallory' } }, history.slice(0, 1)).thenRefuses(ForeignEventError));
});
