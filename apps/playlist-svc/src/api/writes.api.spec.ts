import { type SpecRequest, apiSpecification } from '@udp/test-system';
import { createPlaylistService } from '../app';
import { type PlaylistEvent, playlistsStream } from '../domain/aggregate';

/** Every write endpoint of playlist-svc (v2 and v3): given the user's events, when a request, then the answer and the new events. */
const NOW = 1_700_000_000_000;
const spec = apiSpecification<PlaylistEvent>({
  prefixes: ['/api/playlist'],
  create: (deps) => {
    let n = 0;
    return createPlaylistService({ ...deps, now: () => NOW, newId: () => `p${++n}`, limits: { maxPlaylists: 3, maxBookmarks: 4 } });
  },
});

const alice = playlistsStream('alice');
const bob = playlistsStream('bob');
const V2 = '/api/playlist/v2';
const V3 = '/api/playlist/v3';

const watchLaterCreated = (date = NOW): PlaylistEvent => ({
  type: 'PlaylistCreated',
  data: { playlistId: 'watch_later', businessId: 'watch_later', name: 'Watch later', playlistType: 'watch_later', date },
});
const created = (playlistId: string, businessId: string, name: string, date = NOW - 100): PlaylistEvent => ({
  type: 'PlaylistCreated',
  data: { playlistId, businessId, name, playlistType: 'standard', date },
});
const added = (playlistId: string, bookmarkId: number, itemId: string, date = NOW, addedAt = NOW): PlaylistEvent => ({
  type: 'BookmarkAdded',
  data: { playlistId, bookmarkId, itemId, date, addedAt },
});
const removed = (playlistId: string, bookmarkIds: number[]): PlaylistEvent => ({
  type: 'BookmarksRemoved',
  data: { playlistId, bookmarkIds, date: NOW },
});
const deleted = (playlistId: string): PlaylistEvent => ({ type: 'PlaylistDeleted', data: { playlistId, date: NOW } });

/** Alice has watch later with one bookmark, and "jazz" (technical id j1) with two. */
const aliceHas = [
  watchLaterCreated(NOW - 200),
  created('j1', 'jazz', 'Jazz'),
  added('j1', 1, 'urn:a', NOW - 90, NOW - 90),
  added('j1', 2, 'urn:b', NOW - 80, NOW - 80),
  added('watch_later', 3, 'urn:w', NOW - 70, NOW - 70),
];
/** Given what alice has, when she sends a request. */
const aliceSends = (request: Omit<SpecRequest, 'as'>) => spec.given(alice, aliceHas).when({ as: 'alice', ...request });
/** A refused request: the problem's status, and nothing written. */
const refused = (status: number) => ({ status, body: expect.objectContaining({ status }), events: [] });
const QUOTA_EXCEEDED = { status: 422, body: expect.objectContaining({ status: 422, title: 'Quota Exceeded' }), events: [] };

describe('v2 writes', () => {
  it('POST /v2 creates a named playlist (and, on a first write, watch later)', () =>
    spec
      .given(alice)
      .and(bob, [watchLaterCreated(NOW - 5)])
      .when({ as: 'alice', method: 'post', path: V2, body: { name: 'Rock' } })
      .then({
        status: 201,
        body: { id: 'p1', name: 'Rock', system: false, bookmarks_count: 0, last_update: NOW },
        events: [watchLaterCreated(), created('p1', 'p1', 'Rock', NOW)],
      }));

  it('POST /v2 with system: true answers watch later, creating it only when missing', async () => {
    const body = { id: 'watch_later', name: 'Watch later', system: true, bookmarks_count: 0, last_update: NOW };
    await spec
      .given(alice)
      .when({ as: 'alice', method: 'post', path: V2, body: { name: 'x', system: true } })
      .then({ status: 200, body, events: [watchLaterCreated()] });
    await spec
      .given(alice, [watchLaterCreated()])
      .when({ as: 'alice', method: 'post', path: V2, body: { name: 'x', system: true } })
      .then({ status: 200, body, events: [] });
  });

  it('DELETE /v2 deletes every standard playlist, keeping watch later', () =>
    spec
      .given(alice, [...aliceHas, created('r1', 'rock', 'Rock')])
      .when({ as: 'alice', method: 'delete', path: V2 })
      .then({ status: 204, events: [deleted('j1'), deleted('r1')] }));

  it('POST /v2/new/bookmarks creates a playlist with its first bookmark, the next id of the user', () =>
    aliceSends({ method: 'post', path: `${V2}/new/bookmarks`, body: { name: 'Rock', media_id: 'urn:r' } }).then({
      status: 201,
      body: { playlist_id: 'p1', bookmark_id: 4 },
      events: [created('p1', 'p1', 'Rock', NOW), added('p1', 4, 'urn:r')],
    }));

  it('POST /v2/{id}/bookmarks adds a bookmark (201, the client date when earlier) and adds nothing for one already there (200)', async () => {
    await aliceSends({ method: 'post', path: `${V2}/j1/bookmarks`, body: { media_id: 'urn:c', date: NOW - 1 } }).then({
      status: 201,
      body: { id: 4, media_id: 'urn:c', date: NOW - 1 },
      events: [added('j1', 4, 'urn:c', NOW - 1)],
    });
    await aliceSends({ method: 'post', path: `${V2}/j1/bookmarks`, body: { media_id: 'urn:a' } }).then({
      status: 200,
      body: { id: 1, media_id: 'urn:a', date: NOW - 90 },
      events: [],
    });
  });

  it('POST /v2/{id}/bookmarks past the bookmark limit is refused and writes nothing', () =>
    spec
      .given(alice, [...aliceHas, added('j1', 4, 'urn:c'), added('j1', 5, 'urn:d')])
      .when({ as: 'alice', method: 'post', path: `${V2}/j1/bookmarks`, body: { media_id: 'urn:e' } })
      .then(QUOTA_EXCEEDED));

  it('DELETE /v2/{id}/bookmarks empties the playlist', () =>
    aliceSends({ method: 'delete', path: `${V2}/j1/bookmarks` }).then({ status: 204, events: [removed('j1', [1, 2])] }));

  it('DELETE /v2/{id}/bookmarks/{bookmarkId} removes one bookmark; an unknown one is 404', async () => {
    await aliceSends({ method: 'delete', path: `${V2}/j1/bookmarks/2` }).then({ status: 204, events: [removed('j1', [2])] });
    await aliceSends({ method: 'delete', path: `${V2}/j1/bookmarks/3` }).then(refused(404));
  });

  it("DELETE /v2/{id} deletes the playlist; another user's playlist is 404 and stays", async () => {
    await aliceSends({ method: 'delete', path: `${V2}/j1` }).then({ status: 204, events: [deleted('j1')] });
    await spec
      .given(alice, [watchLaterCreated()])
      .and(bob, [watchLaterCreated(), created('b1', 'secret', 'Secret')])
      .when({ as: 'alice', method: 'delete', path: `${V2}/b1` })
      .then(refused(404));
  });
});

describe('v3 writes', () => {
  it('POST /v3/{businessId} creates an empty playlist (201), renames an existing one (200), and writes nothing for the same name', async () => {
    await aliceSends({ method: 'post', path: `${V3}/rock`, body: { name: 'Rock' } }).then({
      status: 201,
      body: { id: 'p1', businessId: 'rock', name: 'Rock', type: 'standard', bookmarksCount: 0, lastUpdate: NOW },
      events: [created('p1', 'rock', 'Rock', NOW)],
    });
    await aliceSends({ method: 'post', path: `${V3}/jazz`, body: { name: 'Jazz!' } }).then({
      status: 200,
      body: { id: 'j1', businessId: 'jazz', name: 'Jazz!', type: 'standard', bookmarksCount: 2, lastUpdate: NOW },
      events: [{ type: 'PlaylistRenamed', data: { playlistId: 'j1', name: 'Jazz!', date: NOW } }],
    });
    await aliceSends({ method: 'post', path: `${V3}/jazz`, body: { name: 'Jazz' } }).then({
      status: 200,
      body: expect.objectContaining({ id: 'j1', name: 'Jazz' }),
      events: [],
    });
  });

  it('POST /v3/{businessId} past the playlist limit is refused and writes nothing', () =>
    spec
      .given(alice, [...aliceHas, created('r1', 'rock', 'Rock'), created('f1', 'folk', 'Folk')])
      .when({ as: 'alice', method: 'post', path: `${V3}/pop`, body: { name: 'Pop' } })
      .then(QUOTA_EXCEEDED));

  it('DELETE /v3 deletes every standard playlist', () =>
    spec
      .given(alice, aliceHas)
      .and(bob, [watchLaterCreated(), created('b1', 'jazz', 'Jazz')])
      .when({ as: 'alice', method: 'delete', path: V3 })
      .then({ status: 204, events: [deleted('j1')] }));

  it('POST /v3/new/bookmarks creates the playlist with its item (201), or adds the item to the existing one', async () => {
    await spec
      .given(alice)
      .when({ as: 'alice', method: 'post', path: `${V3}/new/bookmarks`, body: { businessId: 'rock', name: 'Rock', itemId: 'urn:r' } })
      .then({
        status: 201,
        body: { id: 1, itemId: 'urn:r', date: NOW },
        events: [watchLaterCreated(), created('p1', 'rock', 'Rock', NOW), added('p1', 1, 'urn:r')],
      });
    await aliceSends({ method: 'post', path: `${V3}/new/bookmarks`, body: { businessId: 'jazz', name: 'Jazz', itemId: 'urn:c' } }).then({
      status: 201,
      body: { id: 4, itemId: 'urn:c', date: NOW },
      events: [added('j1', 4, 'urn:c')],
    });
  });

  it('DELETE /v3/{businessId} deletes the playlist; watch later cannot be deleted (409)', async () => {
    await aliceSends({ method: 'delete', path: `${V3}/jazz` }).then({ status: 204, events: [deleted('j1')] });
    await aliceSends({ method: 'delete', path: `${V3}/watch_later` }).then(refused(409));
  });

  it('POST /v3/{businessId}/bookmarks adds one bookmark, to watch later too', () =>
    aliceSends({ method: 'post', path: `${V3}/watch_later/bookmarks`, body: { itemId: 'urn:c', date: NOW + 50 } }).then({
      status: 201,
      body: { id: 4, itemId: 'urn:c', date: NOW },
      events: [added('watch_later', 4, 'urn:c')],
    }));

  it('PUT /v3/{businessId}/bookmarks adds the new items in one append and answers every entry in the order sent', () =>
    aliceSends({
      method: 'put',
      path: `${V3}/jazz/bookmarks`,
      body: [{ itemId: 'urn:c' }, { itemId: 'urn:a' }, { itemId: 'urn:d', date: NOW - 5 }],
    }).then({
      status: 200,
      body: [
        { id: 4, itemId: 'urn:c', date: NOW },
        { id: 1, itemId: 'urn:a', date: NOW - 90 },
        { id: 5, itemId: 'urn:d', date: NOW - 5 },
      ],
      events: [added('j1', 4, 'urn:c'), added('j1', 5, 'urn:d', NOW - 5)],
    }));

  it('PUT /v3/{businessId}/bookmarks past the limit adds none of them', () =>
    aliceSends({ method: 'put', path: `${V3}/jazz/bookmarks`, body: [{ itemId: 'urn:c' }, { itemId: 'urn:d' }, { itemId: 'urn:e' }] }).then(
      QUOTA_EXCEEDED,
    ));

  it('DELETE /v3/{businessId}/bookmarks removes all, or those matching ids or mediaIds', async () => {
    await aliceSends({ method: 'delete', path: `${V3}/jazz/bookmarks` }).then({ status: 204, events: [removed('j1', [1, 2])] });
    await aliceSends({ method: 'delete', path: `${V3}/jazz/bookmarks`, query: { ids: '2', mediaIds: 'urn:a,urn:zzz' } }).then({
      status: 204,
      events: [removed('j1', [1, 2])],
    });
    await aliceSends({ method: 'delete', path: `${V3}/jazz/bookmarks`, query: { mediaIds: 'urn:zzz' } }).then({ status: 204, events: [] });
  });

  it('DELETE /v3/{businessId}/bookmarks/{bookmarkId} removes one bookmark', () =>
    aliceSends({ method: 'delete', path: `${V3}/watch_later/bookmarks/3` }).then({ status: 204, events: [removed('watch_later', [3])] }));
});
