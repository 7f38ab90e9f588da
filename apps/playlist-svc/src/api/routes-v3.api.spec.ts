import { given } from '@udp/test-kit';
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
const nothing = () => undefined;
const itemIds = async (businessId: string) =>
  (await alice.get(`${V3}/${businessId}`)).body.bookmarks.map((b: { itemId: string }) => b.itemId);

describe('GET /api/playlist/v3: metadata of all playlists', () => {
  it('shows a new user watch later only', async () => {
    await given(nothing)
      .when(() => alice.get(V3))
      .then((res) => {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ playlists: [watchLater] });
      });
  });

  it('lists watch later first, then the others in creation order', async () => {
    await given(async () => {
      s.clock.now = T0 + 1;
      await alice.post(`${V3}/zeta`, { name: 'Zeta' });
      s.clock.now = T0 + 2;
      await alice.post(`${V3}/alpha`, { name: 'Alpha' });
    })
      .when(() => alice.get(V3))
      .then(({ body: { playlists } }) => {
        expect(playlists.map((p: { businessId: string }) => p.businessId)).toEqual(['watch_later', 'zeta', 'alpha']);
        expect(playlists[2]).toEqual({
          id: 't2',
          businessId: 'alpha',
          name: 'Alpha',
          type: 'standard',
          bookmarksCount: 0,
          lastUpdate: T0 + 2,
        });
      });
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
    await given(nothing)
      .when(() => alice.post(`${V3}/favourites`, { name: 'Favourites' }))
      .then(async (res) => {
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
  });

  it('renames an existing playlist (200), keeping its ids and content; the same name changes nothing', async () => {
    await given(async () => {
      await alice.post(`${V3}/favourites`, { name: 'Favourites' });
      await alice.post(`${V3}/favourites/bookmarks`, { itemId: 'urn:a' });
      s.clock.now = T0 + 10;
    })
      .when(() => alice.post(`${V3}/favourites`, { name: 'Best of' }))
      .then((renamed) => {
        expect(renamed.status).toBe(200);
        expect(renamed.body).toEqual(favourites({ name: 'Best of', bookmarksCount: 1, lastUpdate: T0 + 10 }));
      });
    await given(() => {
      s.clock.now = T0 + 20;
    })
      .when(() => alice.post(`${V3}/favourites`, { name: 'Best of' }))
      .then(async (same) => {
        expect(same.status).toBe(200);
        expect(same.body.lastUpdate).toBe(T0 + 10);
        expect((await alice.get(V3)).body.playlists).toHaveLength(2);
      });
  });

  it('renames watch later, which exists for every user', async () => {
    await given(nothing)
      .when(() => alice.post(`${V3}/watch_later`, { name: 'Later' }))
      .then((res) => {
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ id: 'watch_later', businessId: 'watch_later', name: 'Later', type: 'watch_later' });
      });
  });

  it('refuses a missing or empty name, and the reserved business id new', async () => {
    for (const [path, body, field] of [
      [`${V3}/x`, {}, 'name'],
      [`${V3}/x`, { name: '' }, 'name'],
      [`${V3}/x`, { title: 'x' }, 'name'],
      [`${V3}/new`, { name: 'x' }, 'playlistBusinessId'],
    ] as const) {
      await given(nothing)
        .when(() => alice.post(path, body))
        .then((res) => expectProblem(res, 400, field));
    }
    expect((await alice.get(V3)).body.playlists).toHaveLength(1);
  });

  it('refuses a playlist past PLAYLIST_MAX_PLAYLISTS, but still renames', async () => {
    await given(async () => {
      for (const id of ['a', 'b', 'c']) expect((await alice.post(`${V3}/${id}`, { name: id })).status).toBe(201);
    })
      .when(() => alice.post(`${V3}/d`, { name: 'd' }))
      .then((res) => {
        expectProblem(res, 422);
        expect(res.body.title).toBe('Quota Exceeded');
      });
    await given(nothing)
      .when(() => alice.post(`${V3}/c`, { name: 'C' }))
      .then((res) => expect(res.status).toBe(200));
  });
});

describe('POST /api/playlist/v3/new/bookmarks: a playlist with its first item', () => {
  it('creates the playlist and answers the bookmark (201)', async () => {
    await given(nothing)
      .when(() => alice.post(`${V3}/new/bookmarks`, { businessId: 'jazz', itemId: 'urn:a', name: 'Jazz', date: T0 - 60 }))
      .then(async (res) => {
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
  });

  it('is idempotent: sent again it answers the same bookmark (200); a playlist that exists takes the name and the item', async () => {
    const jazzWithA = () => alice.post(`${V3}/new/bookmarks`, { businessId: 'jazz', itemId: 'urn:a', name: 'Jazz' });
    await given(jazzWithA)
      .when(jazzWithA)
      .then((again, first) => {
        expect(again.status).toBe(200);
        expect(again.body).toEqual(first.body);
      });
    await given(nothing)
      .when(() => alice.post(`${V3}/new/bookmarks`, { businessId: 'jazz', itemId: 'urn:b', name: 'Jazz!' }))
      .then(async (more) => {
        expect(more.status).toBe(201);
        expect((await alice.get(`${V3}/jazz`)).body).toMatchObject({ id: 't1', name: 'Jazz!' });
        expect(await itemIds('jazz')).toEqual(['urn:b', 'urn:a']);
      });
  });

  it('uses the client date only when earlier than the server time', async () => {
    await given(nothing)
      .when(() => alice.post(`${V3}/new/bookmarks`, { businessId: 'x', itemId: 'a', name: 'X', date: T0 + 1000 }))
      .then((res) => expect(res.body.date).toBe(T0));
  });

  it('refuses a missing itemId, businessId or name, naming it', async () => {
    const body = { businessId: 'jazz', itemId: 'urn:a', name: 'Jazz' };
    for (const field of ['businessId', 'itemId', 'name'] as const) {
      const { [field]: _left, ...rest } = body;
      await given(nothing)
        .when(() => alice.post(`${V3}/new/bookmarks`, rest))
        .then((res) => {
          expectProblem(res, 400, field);
          expect(res.body.detail).toContain(`${field} is required`);
        });
    }
    for (const [invalid, field] of [
      [{ businessId: 'new' }, 'businessId'],
      [{ date: 'today' }, 'date'],
    ] as const) {
      await given(nothing)
        .when(() => alice.post(`${V3}/new/bookmarks`, { ...body, ...invalid }))
        .then((res) => expectProblem(res, 400, field));
    }
    expect((await alice.get(V3)).body.playlists).toHaveLength(1);
  });
});

describe('GET /api/playlist/v3/{playlistBusinessId}', () => {
  it('answers watch later of a new user, empty', async () => {
    await given(nothing)
      .when(() => alice.get(`${V3}/watch_later`))
      .then((res) =>
        expect(res.body).toEqual({
          bookmarks: [],
          businessId: 'watch_later',
          id: 'watch_later',
          name: 'Watch later',
          type: 'watch_later',
        }),
      );
  });

  it('answers 404 for an unknown business id', async () => {
    await given(nothing)
      .when(() => alice.get(`${V3}/nope`))
      .then((res) => {
        expectProblem(res, 404);
        expect(res.body.detail).toMatch(/no playlist with business id nope/);
      });
  });

  it('takes any business id, URL-encoded', async () => {
    const businessId = 'urn:srf:show/1 ü';
    await given(async () => expect((await alice.post(`${V3}/${encodeURIComponent(businessId)}`, { name: 'Show' })).status).toBe(201))
      .when(() => alice.get(`${V3}/${encodeURIComponent(businessId)}`))
      .then((res) => expect(res.body.businessId).toBe(businessId));
  });
});

describe('DELETE /api/playlist/v3/{playlistBusinessId}', () => {
  it('deletes a playlist; its business id is then unknown, and can be taken again', async () => {
    await given(() => alice.post(`${V3}/new/bookmarks`, { businessId: 'jazz', itemId: 'urn:a', name: 'Jazz' }))
      .when(() => alice.delete(`${V3}/jazz`))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expectProblem(await alice.get(`${V3}/jazz`), 404);
      });
    await given(nothing)
      .when(() => alice.delete(`${V3}/jazz`))
      .then((again) => expectProblem(again, 404));
    await given(nothing)
      .when(() => alice.post(`${V3}/jazz`, { name: 'Jazz' }))
      .then((again) => {
        expect(again.status).toBe(201);
        expect(again.body).toMatchObject({ id: 't2', bookmarksCount: 0 });
      });
  });

  it('never deletes watch later (409)', async () => {
    await given(nothing)
      .when(() => alice.delete(`${V3}/watch_later`))
      .then(async (res) => {
        expectProblem(res, 409);
        expect((await alice.get(`${V3}/watch_later`)).status).toBe(200);
      });
  });
});

describe('DELETE /api/playlist/v3: every playlist except watch later', () => {
  it('keeps watch later and its content', async () => {
    await given(async () => {
      await alice.post(`${V3}/a`, { name: 'A' });
      await alice.post(`${V3}/new/bookmarks`, { businessId: 'b', itemId: 'x', name: 'B' });
      await alice.post(`${V3}/watch_later/bookmarks`, { itemId: 'w' });
    })
      .when(() => alice.delete(V3))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(
          (await alice.get(V3)).body.playlists.map((p: { businessId: string; bookmarksCount: number }) => [p.businessId, p.bookmarksCount]),
        ).toEqual([['watch_later', 1]]);
      });
    await given(nothing)
      .when(() => alice.delete(V3))
      .then((again) => expect(again.status).toBe(204));
  });
});

describe('POST /api/playlist/v3/{playlistBusinessId}/bookmarks', () => {
  /** Alice's playlist jazz, empty: the state every test here starts from. */
  beforeEach(async () => {
    await alice.post(`${V3}/jazz`, { name: 'Jazz' });
  });

  it('adds an item (201), and adding it again answers the same bookmark (200)', async () => {
    await given(nothing)
      .when(() => alice.post(`${V3}/jazz/bookmarks`, { itemId: 'urn:a', date: T0 - 3 }))
      .then((first) => {
        expect(first.status).toBe(201);
        expect(first.body).toEqual({ date: T0 - 3, id: 1, itemId: 'urn:a' });
      });
    await given(nothing)
      .when(() => alice.post(`${V3}/jazz/bookmarks`, { itemId: 'urn:a' }))
      .then((again) => {
        expect(again.status).toBe(200);
        expect(again.body).toEqual({ date: T0 - 3, id: 1, itemId: 'urn:a' });
      });
  });

  it('adds to watch later of a user who never wrote before', async () => {
    await given(nothing)
      .when(() => bob.post(`${V3}/watch_later/bookmarks`, { itemId: 'urn:a' }))
      .then(async (res) => {
        expect(res.status).toBe(201);
        expect((await bob.get(`${V3}/watch_later`)).body.bookmarks).toEqual([res.body]);
      });
  });

  it('answers 404 for an unknown playlist; 400 naming itemId when it is missing', async () => {
    await given(nothing)
      .when(() => alice.post(`${V3}/nope/bookmarks`, { itemId: 'a' }))
      .then((res) => expectProblem(res, 404));
    for (const body of [{}, { media_id: 'a' }]) {
      await given(nothing)
        .when(() => alice.post(`${V3}/jazz/bookmarks`, body))
        .then((res) => expectProblem(res, 400, 'itemId'));
    }
  });

  it('refuses an item past PLAYLIST_MAX_BOOKMARKS', async () => {
    await given(async () => {
      for (const itemId of ['a', 'b', 'c', 'd']) await alice.post(`${V3}/jazz/bookmarks`, { itemId });
    })
      .when(() => alice.post(`${V3}/jazz/bookmarks`, { itemId: 'e' }))
      .then((res) => {
        expectProblem(res, 422);
        expect(res.body.title).toBe('Quota Exceeded');
      });
  });
});

describe('PUT /api/playlist/v3/{playlistBusinessId}/bookmarks: bulk add', () => {
  /** Alice's playlist jazz holding a (bookmark 1): the state every test here starts from. */
  beforeEach(async () => {
    await alice.post(`${V3}/jazz`, { name: 'Jazz' });
    await alice.post(`${V3}/jazz/bookmarks`, { itemId: 'a' });
  });

  it('answers the bookmark of each entry, in the order sent; items already there keep theirs', async () => {
    await given(() => {
      s.clock.now = T0 + 10;
    })
      .when(() => alice.put(`${V3}/jazz/bookmarks`, [{ itemId: 'b', date: T0 - 1 }, { itemId: 'a' }, { itemId: 'c' }, { itemId: 'b' }]))
      .then(async (res) => {
        expect(res.status).toBe(200);
        expect(res.body).toEqual([
          { date: T0 - 1, id: 2, itemId: 'b' },
          { date: T0, id: 1, itemId: 'a' },
          { date: T0 + 10, id: 3, itemId: 'c' },
          { date: T0 - 1, id: 2, itemId: 'b' },
        ]);
        expect((await itemIds('jazz')).sort()).toEqual(['a', 'b', 'c']);
      });
  });

  it('accepts an empty array', async () => {
    await given(nothing)
      .when(() => alice.put(`${V3}/jazz/bookmarks`, []))
      .then((res) => expect([res.status, res.body]).toEqual([200, []]));
  });

  it('refuses a body that is not an array, or an invalid entry, naming it; stores nothing', async () => {
    for (const body of [{ itemId: 'b' }, 'b', 5]) {
      await given(nothing)
        .when(() => alice.put(`${V3}/jazz/bookmarks`, body))
        .then((res) => {
          expectProblem(res, 400, 'body');
          expect(res.body.detail).toMatch(/JSON array/);
        });
    }
    await given(nothing)
      .when(() => alice.put(`${V3}/jazz/bookmarks`, [{ itemId: 'b' }, { date: 5 }]))
      .then(async (res) => {
        expectProblem(res, 400);
        expect(fields(res)).toEqual(['[1].itemId']);
        expect(await itemIds('jazz')).toEqual(['a']);
      });
  });

  it('adds all or none: past PLAYLIST_MAX_BOOKMARKS nothing is added', async () => {
    const bulk = (itemIds: string[]) =>
      alice.put(
        `${V3}/jazz/bookmarks`,
        itemIds.map((itemId) => ({ itemId })),
      );
    await given(nothing)
      .when(() => bulk(['b', 'c', 'd', 'e']))
      .then(async (res) => {
        expectProblem(res, 422);
        expect(res.body.title).toBe('Quota Exceeded');
        expect(await itemIds('jazz')).toEqual(['a']);
      });
    await given(nothing)
      .when(() => bulk(['a', 'b', 'c', 'd']))
      .then((res) => expect(res.status).toBe(200));
  });

  it('answers 404 for an unknown playlist', async () => {
    await given(nothing)
      .when(() => alice.put(`${V3}/nope/bookmarks`, [{ itemId: 'a' }]))
      .then((res) => expectProblem(res, 404));
  });
});

describe('DELETE /api/playlist/v3/{playlistBusinessId}/bookmarks', () => {
  /** Alice's playlist jazz holding a, b, c and d (bookmarks 1 to 4): the state every test here starts from. */
  beforeEach(async () => {
    await alice.post(`${V3}/jazz`, { name: 'Jazz' });
    await alice.put(
      `${V3}/jazz/bookmarks`,
      ['a', 'b', 'c', 'd'].map((itemId) => ({ itemId })),
    );
  });
  const sorted = async () => (await itemIds('jazz')).sort();

  it('deletes every bookmark without a query', async () => {
    await given(nothing)
      .when(() => alice.delete(`${V3}/jazz/bookmarks`))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(await sorted()).toEqual([]);
      });
  });

  it('deletes only the bookmarks named by ids=, ignoring unknown ones', async () => {
    await given(nothing)
      .when(() => alice.delete(`${V3}/jazz/bookmarks?ids=1,3,99`))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(await sorted()).toEqual(['b', 'd']);
      });
  });

  it('deletes only the items named by mediaIds=', async () => {
    await given(nothing)
      .when(() => alice.delete(`${V3}/jazz/bookmarks?mediaIds=b,zz`))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(await sorted()).toEqual(['a', 'c', 'd']);
      });
  });

  it('with both, deletes what either names', async () => {
    await given(nothing)
      .when(() => alice.delete(`${V3}/jazz/bookmarks?ids=1&mediaIds=d`))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(await sorted()).toEqual(['b', 'c']);
      });
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
      await given(nothing)
        .when(() => alice.delete(`${V3}/jazz/bookmarks?${query}`))
        .then((res) => expectProblem(res, 400, field));
    }
    expect(await sorted()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('answers 404 for an unknown playlist', async () => {
    await given(nothing)
      .when(() => alice.delete(`${V3}/nope/bookmarks`))
      .then((res) => expectProblem(res, 404));
  });
});

describe('DELETE /api/playlist/v3/{playlistBusinessId}/bookmarks/{bookmarkId}', () => {
  /** Alice's playlist jazz holding a (bookmark 1), and w in watch later: the state every test here starts from. */
  beforeEach(async () => {
    await alice.post(`${V3}/new/bookmarks`, { businessId: 'jazz', itemId: 'a', name: 'Jazz' });
    await alice.post(`${V3}/watch_later/bookmarks`, { itemId: 'w' });
  });

  it('deletes one bookmark', async () => {
    await given(nothing)
      .when(() => alice.delete(`${V3}/jazz/bookmarks/1`))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(await itemIds('jazz')).toEqual([]);
      });
  });

  it('answers 404 for an unknown id or one of another playlist, 400 naming bookmarkId for a non-integer', async () => {
    for (const path of [`${V3}/jazz/bookmarks/2`, `${V3}/nope/bookmarks/1`]) {
      await given(nothing)
        .when(() => alice.delete(path))
        .then((res) => expectProblem(res, 404));
    }
    await given(nothing)
      .when(() => alice.delete(`${V3}/jazz/bookmarks/one`))
      .then((res) => expectProblem(res, 400, 'bookmarkId'));
    expect(await itemIds('watch_later')).toEqual(['w']);
  });
});

describe("another user's playlists", () => {
  /** Alice's playlist jazz holding a: the state the test starts from. */
  beforeEach(async () => {
    await alice.post(`${V3}/new/bookmarks`, { businessId: 'jazz', itemId: 'a', name: 'Jazz' });
  });

  it('answer 404 and stay as they were', async () => {
    for (const request of [
      () => bob.get(`${V3}/jazz`),
      () => bob.delete(`${V3}/jazz`),
      () => bob.post(`${V3}/jazz/bookmarks`, { itemId: 'x' }),
      () => bob.put(`${V3}/jazz/bookmarks`, [{ itemId: 'x' }]),
      () => bob.delete(`${V3}/jazz/bookmarks`),
      () => bob.delete(`${V3}/jazz/bookmarks/1`),
    ]) {
      await given(nothing)
        .when(request)
        .then((res) => expectProblem(res, 404));
    }
    // Bob's own "jazz" is another playlist.
    await given(nothing)
      .when(() => bob.post(`${V3}/jazz`, { name: 'Bob' }))
      .then((res) => expect(res.status).toBe(201));
    await given(nothing)
      .when(() => bob.delete(V3))
      .then(async () => expect((await alice.get(`${V3}/jazz`)).body).toMatchObject({ name: 'Jazz', bookmarks: [{ itemId: 'a' }] }));
  });
});

describe('the OpenAPI document', () => {
  it('describes every playlist endpoint and payload', async () => {
    await given(nothing)
      .when(async () => (await s.system.http.get('/openapi.json')).body)
      .then((doc) => {
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
        // A name's pattern states both of its rules: no control character, and not only white space.
        const name = new RegExp(doc.components.schemas.NewPlaylist.properties.name.pattern);
        expect(['Jazz', ' a ', 'é'].filter((n) => !name.test(n))).toEqual([]);
        expect([' ', '\t', '\u00a0\ufeff', 'a\u0000'].filter((n) => name.test(n))).toEqual([]);
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
});
