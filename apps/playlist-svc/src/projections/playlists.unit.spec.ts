import type { RecordedEvent } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import type { PlaylistEvent } from '../domain/aggregate';
import { listPlaylists, playlistByBusinessId, playlistById } from './playlist-queries';
import { playlistDocuments, playlistsProjection } from './playlists';

const recorded = (revision: number, event: PlaylistEvent, streamId = 'playlists-erin'): RecordedEvent => ({
  id: `e${revision}`,
  streamId,
  revision,
  position: BigInt(revision + 1),
  type: event.type,
  data: event.data as Record<string, unknown>,
  metadata: { owner: { userId: streamId.slice('playlists-'.length) } },
  createdAt: 0,
});

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

async function project(events: RecordedEvent[]) {
  const readModels = new MemoryReadModelStore();
  const projection = playlistsProjection(readModels);
  for (const event of events) await projection.apply(event);
  return { documents: playlistDocuments(readModels), projection };
}

describe('playlists projection', () => {
  it('builds one document per playlist, with its bookmarks; a deleted playlist is a tombstone that queries skip', async () => {
    const { documents } = await project(history.map((e, i) => recorded(i, e)));
    const list = await listPlaylists(documents, 'erin');
    expect(list.map((d) => [d.playlistId, d.name, d.bookmarks, d.lastUpdate])).toEqual([
      ['watch_later', 'Watch later', [{ id: 3, itemId: 'w', date: 8 }], 8],
      ['u1', 'Jazz!', [{ id: 2, itemId: 'b', date: 2 }], 6],
    ]);
    expect(await playlistById(documents, 'erin', 'u2')).toBeNull();
    expect(await playlistByBusinessId(documents, 'erin', 'rock')).toBeNull();
    expect(await documents.get('erin/u2')).toMatchObject({ deleted: true, bookmarks: [], revision: 8 });
    expect((await playlistByBusinessId(documents, 'erin', 'jazz'))?.playlistId).toBe('u1');
  });

  it('is idempotent: replaying every event, or an older one after a newer, changes nothing', async () => {
    const events = history.map((e, i) => recorded(i, e));
    const { documents, projection } = await project(events);
    const before = await documents.find({ userId: 'erin' }, { sort: { playlistId: 1 } });
    for (const event of events) await projection.apply(event);
    for (const event of [...events].reverse()) await projection.apply(event);
    expect(await documents.find({ userId: 'erin' }, { sort: { playlistId: 1 } })).toEqual(before);
  });

  it("keeps users apart, and answers a user's watch later before the user's first write", async () => {
    const { documents } = await project(history.map((e, i) => recorded(i, e)));
    const fresh = await listPlaylists(documents, 'frank');
    expect(fresh.map((d) => [d.playlistId, d.businessId, d.playlistType, d.bookmarks])).toEqual([
      ['watch_later', 'watch_later', 'watch_later', []],
    ]);
    expect(await playlistById(documents, 'frank', 'u1')).toBeNull();
    expect((await playlistById(documents, 'frank', 'watch_later'))?.bookmarks).toEqual([]);
  });
});
