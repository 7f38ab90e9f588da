import { fullPlaylistV3, metaDataV3 } from '../api/routes-v3';
import { createdPlaylist, evolveAll, initialState } from '../domain/decider';
import { playlistsSnapshot } from '../domain/snapshot';
import { viewOf, viewOfDocument } from './playlist-queries';
import { fieldsOfDocument, newPlaylistDocument } from './playlists';

/**
 * A playlist's fields are declared once (libs/contracts/src/playlists.ts) and the stored shapes and answers derived
 * from them: these are the bytes each has always had (a document, a snapshot, an answer), so a derivation that moved a
 * name or an order fails here. A field added shows in each (after the ones here): add it to the strings.
 */
describe('a playlist in each of its shapes', () => {
  const jazz = createdPlaylist({ playlistId: 'u1', businessId: 'jazz', name: 'Jazz', playlistType: 'standard', date: 2 });
  const state = evolveAll(initialState(), [
    { type: 'PlaylistCreated', data: { playlistId: 'u1', businessId: 'jazz', name: 'Jazz', playlistType: 'standard', date: 2 } },
    { type: 'BookmarkAdded', data: { playlistId: 'u1', bookmarkId: 1, itemId: 'a', date: 3, addedAt: 3 } },
    { type: 'BookmarkAdded', data: { playlistId: 'u1', bookmarkId: 2, itemId: 'b', date: 3, addedAt: 4 } },
  ]);

  it('the read model stores its fields under the document names, in the order it always has', () => {
    const document = newPlaylistDocument('erin', jazz, 0);
    expect(JSON.stringify(document)).toBe(
      '{"_id":"erin/u1","userId":"erin","playlistId":"u1","businessId":"jazz","name":"Jazz","playlistType":"standard",' +
        '"created":2,"lastUpdate":2,"bookmarks":[],"deleted":false,"revision":0}',
    );
    expect(fieldsOfDocument(document)).toEqual(jazz);
  });

  it('the snapshot holds them under their declared names (version 1)', () => {
    const encoded = JSON.stringify(playlistsSnapshot.encode(state));
    expect(encoded).toBe(
      '{"playlists":[{"id":"u1","businessId":"jazz","name":"Jazz","type":"standard","created":2,"lastUpdate":4,' +
        '"bookmarks":[{"id":1,"itemId":"a","date":3},{"id":2,"itemId":"b","date":3}]}],"lastBookmarkId":2}',
    );
    expect(JSON.stringify(playlistsSnapshot.encode(playlistsSnapshot.decode(JSON.parse(encoded))))).toBe(encoded);
  });

  it('v3 answers them in its order, from the state or from the document alike', () => {
    const answer =
      '{"bookmarks":[{"date":3,"id":2,"itemId":"b"},{"date":3,"id":1,"itemId":"a"}],"businessId":"jazz","id":"u1",' +
      '"name":"Jazz","type":"standard"}';
    const view = viewOf(state.playlists.get('u1')!);
    expect(JSON.stringify(fullPlaylistV3(view))).toBe(answer);
    const document = { ...newPlaylistDocument('erin', jazz, 2), bookmarks: view.bookmarks, lastUpdate: 4 };
    expect(JSON.stringify(fullPlaylistV3(viewOfDocument(document)))).toBe(answer);
    expect(JSON.stringify(metaDataV3(view))).toBe(
      '{"id":"u1","businessId":"jazz","name":"Jazz","type":"standard","bookmarksCount":2,"lastUpdate":4}',
    );
  });
});
