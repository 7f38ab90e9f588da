import { type PlaylistSystem, type UserClient, T0, sequentialIds, startPlaylistSystem } from '../testing/playlist-system';

const V3 = '/api/playlist/v3';
let s: PlaylistSystem;
let alice: UserClient;
let bob: UserClient;

beforeEach(async () => {
  s = await startPlaylistSystem({ newId: sequentialIds('t'), limits: { maxPlaylists: 3, maxBookmarks: 4 } });
  alice = await s.as('alice');
  bob = await s.as('bob');
});
afterEach(() => s.stop());

type Res = {
  status: number;
  headers: Record<string, string>;
  body: { status: number; title: string; detail: string; errors?: Array<{ field: string }> };
};
const fields = (res: Res) => (res.body.errors ?? []).map((e) => e.field);
const expectProblem = (res: Res, status: number, field?: string) => {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  expect(res.body.status).toBe(status);
  // The problem names the offending parameter or field (and nothing else).
  if (field) expect(fields(res).length && fields(res).every((f) => f === field || f.startsWith(`${field}[`))).toBeTruthy();
};
const watchLater = {
  id: 'watch_later',
  businessId: 'watch_later',
  name: 'Watch later',
  type: 'watch_later',
  bookmarksCount: 0,
  lastUpdate: 0,
};
const itemIds = async (businessId: string) =>
  (await alice.get(`${V3}/${businessId}`)).body.bookmarks.map((b: { itemId: string }) => b.itemId);

describe('GET /api/playlist/v3: metadata of all playlists', () => {
  it('shows a new user watch later only', async () => {
    const res = await alice.get(V3);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ playlists: [watchLater] });
  });

  it('lists watch later first, then the others in creation order', async () => {
    s.clock.now = T0 + 1;
    await alice.post(`${V3}/zeta`, { name: 'Zeta' });
    s.clock.now = T0 + 2;
    await alice.post(`${V3}/alpha`, { name: 'Alpha' });
    const { playlists } = (await alice.get(V3)).body;
    expect(playlists.map((p: { businessId: string }) => p.businessId)).toEqual(['watch_later', 'zeta', 'alpha']);
    expect(playlists[2]).toEqual({ id: 't2', businessId: 'alpha', name: 'Alpha', type: 'standard', bookmarksCount: 0, lastUpdate: T0 + 2 });
  });
});

describe('POST /api/playlist/v3/{playlistBusinessId}: create or rename', () => {
  /** The summary of the playlist these tests create: the business id chosen, the technical id given. */
  const favourites = (fields: { name: string; bookmarksCount: number; lastUpdate: number }) => ({
    id: 't1',
    businessId: 'favourites',
    type: 'standard',
    ...fields,
  });

  it('creates an empty playlist (201) under the business id, with a technical id of its own', async () => {
    const res = await alice.post(`${V3}/favourites`, { name: 'Favourites' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(favourites({ name: 'Favourites', bookmarksCount: 0, lastUpdate: T0 }));
    expect((await alice.get(`${V3}/favourites`)).body).toEqual({
      bookmarks: [],
      businessId: 'favourites',
      id: 't1',
      name: 'Favourites',
      type: 'standard',
    });
  });

  it('renames an existing playlist (200), keeping its ids and content; the same name changes nothing', async () => {
    await alice.post(`${V3}/favourites`, { name: 'Favourites' });
    await alice.post(`${V3}/favourites/bookmarks`, { itemId: 'urn:a' });
    s.clock.now = T0 + 10;
    const renamed = await alice.post(`${V3}/favourites`, { name: 'Best of' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual(favourites({ name: 'Best of', bookmarksCount: 1, lastUpdate: T0 + 10 }));
    s.clock.now = T0 + 20;
    const same = await alice.post(`${V3}/favourites`, { name: 'Best of' });
    expect(same.status).toBe(200);
    expect(same.body.lastUpdate).toBe(T0 + 10);
    expect((await alice.get(V3)).body.playlists).toHaveLength(2);
  });

  it('renames watch later, which exists for every user', async () => {
    const res = await alice.post(`${V3}/watch_later`, { name: 'Later' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'watch_later', businessId: 'watch_later', name: 'Later', type: 'watch_later' });
  });

  it('refuses a missing or empty name, and the reserved business id new', async () => {
    expectProblem(await alice.post(`${V3}/x`, {}), 400, 'name');
    expectProblem(await alice.post(`${V3}/x`, { name: '' }), 400, 'name');
    expectProblem(await alice.post(`${V3}/x`, { title: 'x' }), 400, 'name');
    expectProblem(await alice.post(`${V3}/new`, { name: 'x' }), 400, 'playlistBusinessId');
    expect((await alice.get(V3)).body.playlists).toHaveLength(1);
  });

  it('refuses a playlist past PLAYLIST_MAX_PLAYLISTS, but still renames', async () => {
    for (const id of ['a', 'b', 'c']) expect((await alice.post(`${V3}/${id}`, { name: id })).status).toBe(201);
    const res = await alice.post(`${V3}/d`, { name: 'd' });
    expectProblem(res, 422);
    expect(res.body.title).toBe('Quota Exceeded');
    expect((await alice.post(`${V3}/c`, { name: 'C' })).status).toBe(200);
  });
});

describe('POST /api/playlist/v3/new/bookmarks: a playlist with its first item', () => {
  it('creates the playlist and answers the bookmark (201)', async () => {
    const res = await alice.post(`${V3}/new/bookmarks`, { businessId: 'jazz', itemId: 'urn:a', name: 'Jazz', date: T0 - 60 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ date: T0 - 60, id: 1, itemId: 'urn:a' });
    expect((await alice.get(`${V3}/jazz`)).body).toEqual({
      bookmarks: [res.body],
      businessId: 'jazz',
      id: 't1',
      name: 'Jazz',
      type: 'standard',
    });
  });

  it('is idempotent: sent again it answers the same bookmark (200); a playlist that exists takes the name and the item', async () => {
    const first = await alice.post(`${V3}/new/bookmarks`, { businessId: 'jazz', itemId: 'urn:a', name: 'Jazz' });
    const again = await alice.post(`${V3}/new/bookmarks`, { businessId: 'jazz', itemId: 'urn:a', name: 'Jazz' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const more = await alice.post(`${V3}/new/bookmarks`, { businessId: 'jazz', itemId: 'urn:b', name: 'Jazz!' });
    expect(more.status).toBe(201);
    expect((await alice.get(`${V3}/jazz`)).body).toMatchObject({ id: 't1', name: 'Jazz!' });
    expect(await itemIds('jazz')).toEqual(['urn:b', 'urn:a']);
  });

  it('uses the client date only when earlier than the server time', async () => {
    expect((await alice.post(`${V3}/new/bookmarks`, { businessId: 'x', itemId: 'a', name: 'X', date: T0 + 1000 })).body.date).toBe(T0);
  });

  it('refuses a missing itemId, businessId or name, naming it', async () => {
    const body = { businessId: 'jazz', itemId: 'urn:a', name: 'Jazz' };
    for (const field of ['businessId', 'itemId', 'name'] as const) {
      const { [field]: _left, ...rest } = body;
      const res = await alice.post(`${V3}/new/bookmarks`, rest);
      expectProblem(res, 400, field);
      expect(res.body.detail).toContain(`${field} is required`);
    }
    expectProblem(await alice.post(`${V3}/new/bookmarks`, { ...body, businessId: 'new' }), 400, 'businessId');
    expectProblem(await alice.post(`${V3}/new/bookmarks`, { ...body, date: 'today' }), 400, 'date');
    expect((await alice.get(V3)).body.playlists).toHaveLength(1);
  });
});

describe('GET /api/playlist/v3/{playlistBusinessId}', () => {
  it('answers watch later of a new user, empty', async () => {
    expect((await alice.get(`${V3}/watch_later`)).body).toEqual({
      bookmarks: [],
      businessId: 'watch_later',
      id: 'watch_later',
      name: 'Watch later',
      type: 'watch_later',
    });
  });

  it('answers 404 for an unknown business id', async () => {
    const res = await alice.get(`${V3}/nope`);
    expectProblem(res, 404);
    expect(res.body.detail).toMatch(/no playlist with business id nope/);
  });

  it('takes any business id, URL-encoded', async () => {
    const businessId = 'urn:srf:show/1 ü';
    expect((await alice.post(`${V3}/${encodeURIComponent(businessId)}`, { name: 'Show' })).status).toBe(201);
    expect((await alice.get(`${V3}/${encodeURIComponent(businessId)}`)).body.businessId).toBe(businessId);
  });
});

describe('DELETE /api/playlist/v3/{playlistBusinessId}', () => {
  it('deletes a playlist; its business id is then unknown, and can be taken again', async () => {
    await alice.post(`${V3}/new/bookmarks`, { businessId: 'jazz', itemId: 'urn:a', name: 'Jazz' });
    expect((await alice.delete(`${V3}/jazz`)).status).toBe(204);
    expectProblem(await alice.get(`${V3}/jazz`), 404);
    expectProblem(await alice.delete(`${V3}/jazz`), 404);
    const again = await alice.post(`${V3}/jazz`, { name: 'Jazz' });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ id: 't2', bookmarksCount: 0 });
  });

  it('never deletes watch later (409)', async () => {
    expectProblem(await alice.delete(`${V3}/watch_later`), 409);
    expect((await alice.get(`${V3}/watch_later`)).status).toBe(200);
  });
});

describe('DELETE /api/playlist/v3: every playlist except watch later', () => {
  it('keeps watch later and its content', async () => {
    await alice.post(`${V3}/a`, { name: 'A' });
    await alice.post(`${V3}/new/bookmarks`, { businessId: 'b', itemId: 'x', name: 'B' });
    await alice.post(`${V3}/watch_later/bookmarks`, { itemId: 'w' });
    expect((await alice.delete(V3)).status).toBe(204);
    expect(
      (await alice.get(V3)).body.playlists.map((p: { businessId: string; bookmarksCount: number }) => [p.businessId, p.bookmarksCount]),
    ).toEqual([['watch_later', 1]]);
    expect((await alice.delete(V3)).status).toBe(204);
  });
});

describe('POST /api/playlist/v3/{playlistBusinessId}/bookmarks', () => {
  beforeEach(async () => {
    await alice.post(`${V3}/jazz`, { name: 'Jazz' });
  });

  it('adds an item (201), and adding it again answers the same bookmark (200)', async () => {
    const first = await alice.post(`${V3}/jazz/bookmarks`, { itemId: 'urn:a', date: T0 - 3 });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ date: T0 - 3, id: 1, itemId: 'urn:a' });
    const again = await alice.post(`${V3}/jazz/bookmarks`, { itemId: 'urn:a' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
  });

  it('adds to watch later of a user who never wrote before', async () => {
    const res = await bob.post(`${V3}/watch_later/bookmarks`, { itemId: 'urn:a' });
    expect(res.status).toBe(201);
    expect((await bob.get(`${V3}/watch_later`)).body.bookmarks).toEqual([res.body]);
  });

  it('answers 404 for an unknown playlist; 400 naming itemId when it is missing', async () => {
    expectProblem(await alice.post(`${V3}/nope/bookmarks`, { itemId: 'a' }), 404);
    expectProblem(await alice.post(`${V3}/jazz/bookmarks`, {}), 400, 'itemId');
    expectProblem(await alice.post(`${V3}/jazz/bookmarks`, { media_id: 'a' }), 400, 'itemId');
  });

  it('refuses an item past PLAYLIST_MAX_BOOKMARKS', async () => {
    for (const itemId of ['a', 'b', 'c', 'd']) await alice.post(`${V3}/jazz/bookmarks`, { itemId });
    const res = await alice.post(`${V3}/jazz/bookmarks`, { itemId: 'e' });
    expectProblem(res, 422);
    expect(res.body.title).toBe('Quota Exceeded');
  });
});

describe('PUT /api/playlist/v3/{playlistBusinessId}/bookmarks: bulk add', () => {
  beforeEach(async () => {
    await alice.post(`${V3}/jazz`, { name: 'Jazz' });
    await alice.post(`${V3}/jazz/bookmarks`, { itemId: 'a' });
  });

  it('answers the bookmark of each entry, in the order sent; items already there keep theirs', async () => {
    s.clock.now = T0 + 10;
    const res = await alice.put(`${V3}/jazz/bookmarks`, [{ itemId: 'b', date: T0 - 1 }, { itemId: 'a' }, { itemId: 'c' }, { itemId: 'b' }]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { date: T0 - 1, id: 2, itemId: 'b' },
      { date: T0, id: 1, itemId: 'a' },
      { date: T0 + 10, id: 3, itemId: 'c' },
      { date: T0 - 1, id: 2, itemId: 'b' },
    ]);
    expect((await itemIds('jazz')).sort()).toEqual(['a', 'b', 'c']);
  });

  it('accepts an empty array', async () => {
    const res = await alice.put(`${V3}/jazz/bookmarks`, []);
    expect([res.status, res.body]).toEqual([200, []]);
  });

  it('refuses a body that is not an array, or an invalid entry, naming it; stores nothing', async () => {
    for (const body of [{ itemId: 'b' }, 'b', 5]) {
      const res = await alice.put(`${V3}/jazz/bookmarks`, body);
      expectProblem(res, 400, 'body');
      expect(res.body.detail).toMatch(/JSON array/);
    }
    const res = await alice.put(`${V3}/jazz/bookmarks`, [{ itemId: 'b' }, { date: 5 }]);
    expectProblem(res, 400);
    expect(fields(res)).toEqual(['[1].itemId']);
    expect(await itemIds('jazz')).toEqual(['a']);
  });

  it('adds all or none: past PLAYLIST_MAX_BOOKMARKS nothing is added', async () => {
    const res = await alice.put(
      `${V3}/jazz/bookmarks`,
      ['b', 'c', 'd', 'e'].map((itemId) => ({ itemId })),
    );
    expectProblem(res, 422);
    expect(res.body.title).toBe('Quota Exceeded');
    expect(await itemIds('jazz')).toEqual(['a']);
    expect(
      (
        await alice.put(
          `${V3}/jazz/bookmarks`,
          ['a', 'b', 'c', 'd'].map((itemId) => ({ itemId })),
        )
      ).status,
    ).toBe(200);
  });

  it('answers 404 for an unknown playlist', async () => {
    expectProblem(await alice.put(`${V3}/nope/bookmarks`, [{ itemId: 'a' }]), 404);
  });
});

describe('DELETE /api/playlist/v3/{playlistBusinessId}/bookmarks', () => {
  beforeEach(async () => {
    await alice.post(`${V3}/jazz`, { name: 'Jazz' });
    await alice.put(
      `${V3}/jazz/bookmarks`,
      ['a', 'b', 'c', 'd'].map((itemId) => ({ itemId })),
    );
  });
  const sorted = async () => (await itemIds('jazz')).sort();

  it('deletes every bookmark without a query', async () => {
    expect((await alice.delete(`${V3}/jazz/bookmarks`)).status).toBe(204);
    expect(await sorted()).toEqual([]);
  });

  it('deletes only the bookmarks named by ids=, ignoring unknown ones', async () => {
    expect((await alice.delete(`${V3}/jazz/bookmarks?ids=1,3,99`)).status).toBe(204);
    expect(await sorted()).toEqual(['b', 'd']);
  });

  it('deletes only the items named by mediaIds=', async () => {
    expect((await alice.delete(`${V3}/jazz/bookmarks?mediaIds=b,zz`)).status).toBe(204);
    expect(await sorted()).toEqual(['a', 'c', 'd']);
  });

  it('with both, deletes what either names', async () => {
    expect((await alice.delete(`${V3}/jazz/bookmarks?ids=1&mediaIds=d`)).status).toBe(204);
    expect(await sorted()).toEqual(['b', 'c']);
  });

  it('refuses ids that are not int32, and empty lists, naming the parameter; deletes nothing', async () => {
    for (const [query, field] of [
      ['ids=abc', 'ids'],
      ['ids=1,x', 'ids'],
      ['ids=', 'ids'],
      ['ids=4294967296', 'ids'],
      ['mediaIds=', 'mediaIds'],
      ['ids=1&ids=2', 'ids'],
    ]) {
      expectProblem(await alice.delete(`${V3}/jazz/bookmarks?${query}`), 400, field);
    }
    expect(await sorted()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('answers 404 for an unknown playlist', async () => {
    expectProblem(await alice.delete(`${V3}/nope/bookmarks`), 404);
  });
});

describe('DELETE /api/playlist/v3/{playlistBusinessId}/bookmarks/{bookmarkId}', () => {
  beforeEach(async () => {
    await alice.post(`${V3}/new/bookmarks`, { businessId: 'jazz', itemId: 'a', name: 'Jazz' });
    await alice.post(`${V3}/watch_later/bookmarks`, { itemId: 'w' });
  });

  it('deletes one bookmark', async () => {
    expect((await alice.delete(`${V3}/jazz/bookmarks/1`)).status).toBe(204);
    expect(await itemIds('jazz')).toEqual([]);
  });

  it('answers 404 for an unknown id or one of another playlist, 400 naming bookmarkId for a non-integer', async () => {
    expectProblem(await alice.delete(`${V3}/jazz/bookmarks/2`), 404);
    expectProblem(await alice.delete(`${V3}/nope/bookmarks/1`), 404);
    expectProblem(await alice.delete(`${V3}/jazz/bookmarks/one`), 400, 'bookmarkId');
    expect(await itemIds('watch_later')).toEqual(['w']);
  });
});

describe("another user's playlists", () => {
  it('answer 404 and stay as they were', async () => {
    await alice.post(`${V3}/new/bookmarks`, { businessId: 'jazz', itemId: 'a', name: 'Jazz' });
    expectProblem(await bob.get(`${V3}/jazz`), 404);
    expectProblem(await bob.delete(`${V3}/jazz`), 404);
    expectProblem(await bob.post(`${V3}/jazz/bookmarks`, { itemId: 'x' }), 404);
    expectProblem(await bob.put(`${V3}/jazz/bookmarks`, [{ itemId: 'x' }]), 404);
    expectProblem(await bob.delete(`${V3}/jazz/bookmarks`), 404);
    expectProblem(await bob.delete(`${V3}/jazz/bookmarks/1`), 404);
    // Bob's own "jazz" is another playlist.
    expect((await bob.post(`${V3}/jazz`, { name: 'Bob' })).status).toBe(201);
    await bob.delete(V3);
    expect((await alice.get(`${V3}/jazz`)).body).toMatchObject({ name: 'Jazz', bookmarks: [{ itemId: 'a' }] });
  });
});

describe('the OpenAPI document', () => {
  it('describes every playlist endpoint and payload', async () => {
    const doc = (await s.system.http.get('/openapi.json')).body;
    const paths = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith('/api/playlist'))
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`));
    expect(paths.sort()).toEqual([
      'DELETE /api/playlist/v2',
      'DELETE /api/playlist/v2/{playlistId}/bookmarks',
      'DELETE /api/playlist/v2/{playlistId}/bookmarks/{bookmarks_id}',
      'DELETE /api/playlist/v2/{playlist_id}',
      'DELETE /api/playlist/v3',
      'DELETE /api/playlist/v3/{playlistBusinessId}',
      'DELETE /api/playlist/v3/{playlistBusinessId}/bookmarks',
      'DELETE /api/playlist/v3/{playlistBusinessId}/bookmarks/{bookmarkId}',
      'GET /api/playlist/v2',
      'GET /api/playlist/v2/{playlistId}/bookmarks',
      'GET /api/playlist/v3',
      'GET /api/playlist/v3/{playlistBusinessId}',
      'POST /api/playlist/v2',
      'POST /api/playlist/v2/new/bookmarks',
      'POST /api/playlist/v2/{playlistId}/bookmarks',
      'POST /api/playlist/v3/new/bookmarks',
      'POST /api/playlist/v3/{playlistBusinessId}',
      'POST /api/playlist/v3/{playlistBusinessId}/bookmarks',
      'PUT /api/playlist/v3/{playlistBusinessId}/bookmarks',
    ]);
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'Bookmark',
        'BookmarkV3',
        'BookmarksIds',
        'FullPlaylist',
        'FullPlaylistV3',
        'NewPlaylist',
        'NewPlaylistWithContent',
        'NewPlaylistWithContentV3',
        'NewMediaForPlaylistV2',
        'NewMediaForPlaylistV3',
        'PlaylistAttributesV3',
        'PlaylistMetaData',
        'PlaylistMetaDataV3',
        'RetrievedPlaylists',
        'RetrievedPlaylistsV3',
      ]),
    );
    expect(doc.components.schemas.PlaylistMetaDataV3.required).toEqual([
      'id',
      'businessId',
      'name',
      'type',
      'bookmarksCount',
      'lastUpdate',
    ]);
  });
});
