import { given } from '@udp/test-kit';
import { type PlaylistSystem, type UserClient, T0, sequentialIds, startPlaylistSystem } from '../testing/playlist-system';

const V2 = '/api/playlist/v2';
let s: PlaylistSystem;
let alice: UserClient;
let bob: UserClient;

beforeEach(async () => {
  s = await startPlaylistSystem({ newId: sequentialIds(), limits: { maxPlaylists: 3, maxBookmarks: 4 } });
  alice = await s.as('alice');
  bob = await s.as('bob');
});
afterEach(() => s.stop());

const fields = (res: { body: { errors?: Array<{ field: string }> } }) => (res.body.errors ?? []).map((e) => e.field);
const expectProblem = (
  res: { status: number; headers: Record<string, string>; body: { status: number; title: string; detail: string } },
  status: number,
) => {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  expect(res.body.status).toBe(status);
  expect(res.body.detail).toEqual(expect.any(String));
};
const nothing = () => undefined;
const systemPlaylist = { id: 'watch_later', name: 'Watch later', system: true, bookmarks_count: 0, last_update: 0 };

describe('GET /api/playlist/v2: the playlists', () => {
  it('shows a new user the system playlist only (watch later exists from first use)', async () => {
    await given(nothing)
      .when(() => alice.get(V2))
      .then((res) => {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ playlists: [systemPlaylist] });
      });
  });

  it('lists the system playlist first, then the others in creation order', async () => {
    await given(async () => {
      s.clock.now = T0 + 1;
      await alice.post(V2, { name: 'Jazz' });
      s.clock.now = T0 + 2;
      await alice.post(V2, { name: 'Rock' });
    })
      .when(() => alice.get(V2))
      .then((res) => {
        expect(res.body.playlists.map((p: { id: string; name: string }) => [p.id, p.name])).toEqual([
          ['watch_later', 'Watch later'],
          ['p1', 'Jazz'],
          ['p2', 'Rock'],
        ]);
        expect(res.body.playlists[2]).toEqual({ id: 'p2', name: 'Rock', system: false, bookmarks_count: 0, last_update: T0 + 2 });
      });
  });

  it('names the system playlist withSystemDefaultPlaylistName, and no other', async () => {
    await given(() => alice.post(V2, { name: 'Jazz' }))
      .when(() => alice.get(`${V2}?withSystemDefaultPlaylistName=${encodeURIComponent('À regarder plus tard')}`))
      .then((res) =>
        expect(res.body.playlists.map((p: { name: string; system: boolean }) => [p.name, p.system])).toEqual([
          ['À regarder plus tard', true],
          ['Jazz', false],
        ]),
      );
  });

  it('refuses an empty or repeated withSystemDefaultPlaylistName', async () => {
    for (const query of ['withSystemDefaultPlaylistName=', 'withSystemDefaultPlaylistName=a&withSystemDefaultPlaylistName=b']) {
      await given(nothing)
        .when(() => alice.get(`${V2}?${query}`))
        .then((res) => {
          expectProblem(res, 400);
          expect(fields(res)).toEqual(['withSystemDefaultPlaylistName']);
        });
    }
  });
});

describe('POST /api/playlist/v2: create an empty playlist', () => {
  it('answers 201 with its metadata; the new playlist reads back empty', async () => {
    await given(() => {
      s.clock.now = T0 + 7;
    })
      .when(() => alice.post(V2, { name: 'Jazz', system: false, unknown: 'ignored' }))
      .then(async (res) => {
        expect(res.status).toBe(201);
        expect(res.body).toEqual({ id: 'p1', name: 'Jazz', system: false, bookmarks_count: 0, last_update: T0 + 7 });
        expect((await alice.get(`${V2}/p1/bookmarks`)).body).toEqual({ bookmarks: [], id: 'p1', name: 'Jazz', system: false });
      });
  });

  it('with system: true creates nothing and answers the system playlist (200)', async () => {
    await given(nothing)
      .when(() => alice.post(V2, { name: 'Mine', system: true }))
      .then(async (res) => {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ ...systemPlaylist, last_update: T0 });
        expect((await alice.get(V2)).body.playlists).toHaveLength(1);
      });
  });

  it('refuses a missing, empty or mistyped name, a mistyped system and a body that is not an object', async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{}, 'name', /name is required/],
      [{ name: '' }, 'name', /must not be empty/],
      [{ name: '   ' }, 'name', /blank/],
      [{ name: 5 }, 'name', /must be a string/],
      [{ name: 'x'.repeat(257) }, 'name', /at most 256/],
      [{ name: 'a', system: 'yes' }, 'system', /true or false/],
      [[{ name: 'a' }], 'body', /JSON object/],
      [undefined, 'body', /body is required/],
    ];
    for (const [body, field, message] of cases) {
      await given(nothing)
        .when(() => alice.post(V2, body))
        .then(async (res) => {
          expectProblem(res, 400);
          expect(fields(res)).toEqual([field]);
          expect(res.body.detail).toMatch(message);
          expect((await alice.get(V2)).body.playlists).toHaveLength(1);
        });
    }
  });

  it('refuses a playlist past PLAYLIST_MAX_PLAYLISTS with a clear 4xx (watch later does not count)', async () => {
    await given(async () => {
      for (const name of ['a', 'b', 'c']) expect((await alice.post(V2, { name })).status).toBe(201);
    })
      .when(() => alice.post(V2, { name: 'd' }))
      .then(async (res) => {
        expectProblem(res, 422);
        expect(res.body.title).toBe('Quota Exceeded');
        expect(res.body.detail).toMatch(/at most 3 playlists/);
        expect((await alice.get(V2)).body.playlists).toHaveLength(4);
      });
    // Another user has a limit of its own.
    await given(nothing)
      .when(() => bob.post(V2, { name: 'a' }))
      .then((res) => expect(res.status).toBe(201));
  });
});

describe('POST /api/playlist/v2/new/bookmarks: a playlist with its first media', () => {
  it('answers the ids of the new playlist and bookmark', async () => {
    await given(nothing)
      .when(() => alice.post(`${V2}/new/bookmarks`, { media_id: 'urn:a', name: 'Jazz' }))
      .then(async (res) => {
        expect(res.status).toBe(201);
        expect(res.body).toEqual({ bookmark_id: 1, playlist_id: 'p1' });
        expect((await alice.get(`${V2}/p1/bookmarks`)).body).toEqual({
          bookmarks: [{ date: T0, id: 1, media_id: 'urn:a' }],
          id: 'p1',
          name: 'Jazz',
          system: false,
        });
      });
  });

  it('refuses a missing media_id or name', async () => {
    for (const [body, field] of [
      [{ name: 'x' }, 'media_id'],
      [{ media_id: 'urn:a' }, 'name'],
      [{ media_id: '', name: 'x' }, 'media_id'],
    ] as const) {
      await given(nothing)
        .when(() => alice.post(`${V2}/new/bookmarks`, body))
        .then((res) => {
          expectProblem(res, 400);
          expect(fields(res)).toEqual([field]);
        });
    }
  });
});

describe('GET /api/playlist/v2/{playlistId}/bookmarks', () => {
  it('answers the system playlist of a new user, empty', async () => {
    await given(nothing)
      .when(() => alice.get(`${V2}/watch_later/bookmarks`))
      .then((res) =>
        expect(res.body).toEqual({
          bookmarks: [],
          id: 'watch_later',
          name: 'Watch later',
          system: true,
        }),
      );
  });

  it('lists the bookmarks newest first', async () => {
    await given(async () => {
      await alice.post(V2, { name: 'Jazz' });
      await alice.post(`${V2}/p1/bookmarks`, { media_id: 'old', date: T0 - 100 });
      await alice.post(`${V2}/p1/bookmarks`, { media_id: 'now' });
      await alice.post(`${V2}/p1/bookmarks`, { media_id: 'older', date: T0 - 200 });
    })
      .when(() => alice.get(`${V2}/p1/bookmarks`))
      .then((res) =>
        expect(res.body.bookmarks).toEqual([
          { date: T0, id: 2, media_id: 'now' },
          { date: T0 - 100, id: 1, media_id: 'old' },
          { date: T0 - 200, id: 3, media_id: 'older' },
        ]),
      );
  });

  it('answers 404 for an unknown playlist', async () => {
    await given(nothing)
      .when(() => alice.get(`${V2}/nope/bookmarks`))
      .then((res) => {
        expectProblem(res, 404);
        expect(res.body.detail).toMatch(/no playlist with id nope/);
      });
  });
});

describe('POST /api/playlist/v2/{playlistId}/bookmarks: add a media', () => {
  /** Alice's playlist p1, empty: the state every test here starts from. */
  beforeEach(async () => {
    await alice.post(V2, { name: 'Jazz' });
  });

  it('answers 201 with the bookmark; the server time is its date when none is sent', async () => {
    await given(() => {
      s.clock.now = T0 + 50;
    })
      .when(() => alice.post(`${V2}/p1/bookmarks`, { media_id: 'urn:a' }))
      .then((res) => {
        expect(res.status).toBe(201);
        expect(res.body).toEqual({ date: T0 + 50, id: 1, media_id: 'urn:a' });
      });
  });

  it('uses the client date only when it is earlier than the server time', async () => {
    await given(nothing)
      .when(() => alice.post(`${V2}/p1/bookmarks`, { media_id: 'past', date: T0 - 5 }))
      .then((res) => expect(res.body.date).toBe(T0 - 5));
    await given(nothing)
      .when(() => alice.post(`${V2}/p1/bookmarks`, { media_id: 'future', date: T0 + 5 }))
      .then((res) => expect(res.body.date).toBe(T0));
  });

  it('keeps one bookmark per media: adding it again answers the same bookmark (200) and changes nothing', async () => {
    await given(async () => {
      const first = await alice.post(`${V2}/p1/bookmarks`, { media_id: 'urn:a', date: T0 - 10 });
      s.clock.now = T0 + 99;
      return first.body;
    })
      .when(() => alice.post(`${V2}/p1/bookmarks`, { media_id: 'urn:a', date: T0 - 1 }))
      .then(async (again, first) => {
        expect(again.status).toBe(200);
        expect(again.body).toEqual(first);
        expect((await alice.get(`${V2}/p1/bookmarks`)).body.bookmarks).toEqual([first]);
        expect((await alice.get(V2)).body.playlists[1].last_update).toBe(T0);
      });
  });

  it('adds to the system playlist by its id, watch_later', async () => {
    await given(nothing)
      .when(() => alice.post(`${V2}/watch_later/bookmarks`, { media_id: 'urn:a' }))
      .then(async (res) => {
        expect(res.status).toBe(201);
        expect((await alice.get(V2)).body.playlists[0]).toMatchObject({ id: 'watch_later', system: true, bookmarks_count: 1 });
      });
  });

  it('answers 404 for an unknown playlist, and stores nothing', async () => {
    await given(nothing)
      .when(() => alice.post(`${V2}/nope/bookmarks`, { media_id: 'urn:a' }))
      .then(async (res) => {
        expectProblem(res, 404);
        expect((await alice.get(V2)).body.playlists.map((p: { bookmarks_count: number }) => p.bookmarks_count)).toEqual([0, 0]);
      });
  });

  it('refuses bad input naming the field', async () => {
    for (const [body, field] of [
      [{}, 'media_id'],
      [{ media_id: 7 }, 'media_id'],
      [{ media_id: 'a', date: 'x' }, 'date'],
      [{ media_id: 'a', date: 1.5 }, 'date'],
      [{ media_id: 'a', date: -1 }, 'date'],
    ] as const) {
      await given(nothing)
        .when(() => alice.post(`${V2}/p1/bookmarks`, body))
        .then((res) => {
          expectProblem(res, 400);
          expect(fields(res)).toEqual([field]);
        });
    }
  });

  it('refuses a media past PLAYLIST_MAX_BOOKMARKS with a clear 4xx, but still accepts one already there', async () => {
    const full = async () => {
      for (const media_id of ['a', 'b', 'c', 'd']) expect((await alice.post(`${V2}/p1/bookmarks`, { media_id })).status).toBe(201);
    };
    await given(full)
      .when(() => alice.post(`${V2}/p1/bookmarks`, { media_id: 'e' }))
      .then((res) => {
        expectProblem(res, 422);
        expect(res.body.title).toBe('Quota Exceeded');
        expect(res.body.detail).toMatch(/at most 4 bookmarks/);
      });
    await given(nothing)
      .when(() => alice.post(`${V2}/p1/bookmarks`, { media_id: 'a' }))
      .then((res) => expect(res.status).toBe(200));
  });
});

describe('DELETE bookmarks', () => {
  /** Alice's playlist p1 holding a, b and c (bookmarks 1, 2, 3): the state every test here starts from. */
  beforeEach(async () => {
    await alice.post(V2, { name: 'Jazz' });
    for (const media_id of ['a', 'b', 'c']) await alice.post(`${V2}/p1/bookmarks`, { media_id });
  });
  const mediaIds = async () => (await alice.get(`${V2}/p1/bookmarks`)).body.bookmarks.map((b: { media_id: string }) => b.media_id).sort();

  it('DELETE .../bookmarks/{bookmarks_id} deletes one bookmark', async () => {
    await given(nothing)
      .when(() => alice.delete(`${V2}/p1/bookmarks/2`))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(await mediaIds()).toEqual(['a', 'c']);
      });
  });

  it('answers 404 for an unknown bookmark or one of another playlist, 400 for an id that is not an int32', async () => {
    for (const path of [`${V2}/p1/bookmarks/99`, `${V2}/watch_later/bookmarks/1`]) {
      await given(nothing)
        .when(() => alice.delete(path))
        .then(async (res) => {
          expectProblem(res, 404);
          expect(await mediaIds()).toEqual(['a', 'b', 'c']);
        });
    }
    for (const id of ['abc', '1.5', '-1', '2147483648']) {
      await given(nothing)
        .when(() => alice.delete(`${V2}/p1/bookmarks/${id}`))
        .then(async (res) => {
          expectProblem(res, 400);
          expect(fields(res)).toEqual(['bookmarks_id']);
          expect(await mediaIds()).toEqual(['a', 'b', 'c']);
        });
    }
  });

  it('DELETE .../bookmarks empties the playlist, which stays', async () => {
    await given(nothing)
      .when(() => alice.delete(`${V2}/p1/bookmarks`))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(await mediaIds()).toEqual([]);
      });
    await given(nothing)
      .when(() => alice.delete(`${V2}/p1/bookmarks`))
      .then((again) => expect(again.status).toBe(204));
    await given(nothing)
      .when(() => alice.delete(`${V2}/nope/bookmarks`))
      .then((res) => expectProblem(res, 404));
  });

  it('a media added again after its deletion gets a new bookmark id', async () => {
    await given(() => alice.delete(`${V2}/p1/bookmarks/1`))
      .when(() => alice.post(`${V2}/p1/bookmarks`, { media_id: 'a' }))
      .then((res) => expect(res.body.id).toBe(4));
  });
});

describe('DELETE playlists', () => {
  /** Alice's p1 (Jazz, holding a), p2 (Rock, empty), and w in watch later: the state every test here starts from. */
  beforeEach(async () => {
    await alice.post(`${V2}/new/bookmarks`, { media_id: 'a', name: 'Jazz' });
    await alice.post(V2, { name: 'Rock' });
    await alice.post(`${V2}/watch_later/bookmarks`, { media_id: 'w' });
  });

  it('DELETE /api/playlist/v2/{playlist_id} deletes one playlist; it is then unknown', async () => {
    await given(nothing)
      .when(() => alice.delete(`${V2}/p1`))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expectProblem(await alice.get(`${V2}/p1/bookmarks`), 404);
      });
    await given(nothing)
      .when(() => alice.delete(`${V2}/p1`))
      .then(async (again) => {
        expectProblem(again, 404);
        expect((await alice.get(V2)).body.playlists.map((p: { id: string }) => p.id)).toEqual(['watch_later', 'p2']);
      });
  });

  it('never deletes the system playlist (409)', async () => {
    await given(nothing)
      .when(() => alice.delete(`${V2}/watch_later`))
      .then((res) => {
        expectProblem(res, 409);
        expect(res.body.detail).toMatch(/watch-later playlist cannot be deleted/);
      });
  });

  it('DELETE /api/playlist/v2 deletes every playlist but the system one, which keeps its content', async () => {
    await given(nothing)
      .when(() => alice.delete(V2))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect((await alice.get(V2)).body).toEqual({ playlists: [{ ...systemPlaylist, bookmarks_count: 1, last_update: T0 }] });
        expect((await alice.get(`${V2}/watch_later/bookmarks`)).body.bookmarks.map((b: { media_id: string }) => b.media_id)).toEqual(['w']);
      });
    await given(nothing)
      .when(() => alice.delete(V2))
      .then((again) => expect(again.status).toBe(204));
  });
});

describe('users are kept apart', () => {
  /** Alice's playlist p1 holding her secret: the state every test here starts from. */
  beforeEach(async () => {
    await alice.post(`${V2}/new/bookmarks`, { media_id: 'secret', name: 'Mine' });
  });
  const alicesMedia = async () =>
    (await alice.get(`${V2}/p1/bookmarks`)).body.bookmarks.map((b: { media_id: string }) => b.media_id) as string[];

  it("another user's playlist answers 404 to every operation, and stays as it was", async () => {
    await given(nothing)
      .when(() => bob.get(V2))
      .then((res) => expect(res.body.playlists.map((p: { id: string }) => p.id)).toEqual(['watch_later']));
    for (const request of [
      () => bob.get(`${V2}/p1/bookmarks`),
      () => bob.post(`${V2}/p1/bookmarks`, { media_id: 'x' }),
      () => bob.delete(`${V2}/p1/bookmarks`),
      () => bob.delete(`${V2}/p1/bookmarks/1`),
      () => bob.delete(`${V2}/p1`),
    ]) {
      await given(nothing)
        .when(request)
        .then((res) => expectProblem(res, 404));
    }
    await given(nothing)
      .when(() => bob.delete(V2))
      .then(async () => expect(await alicesMedia()).toEqual(['secret']));
  });

  it('answers 401 without credentials', async () => {
    await given(nothing)
      .when(() => s.system.http.get(V2))
      .then((res) => expectProblem(res, 401));
    await given(nothing)
      .when(() => s.system.http.post(`${V2}/p1/bookmarks`).send({ media_id: 'x' }))
      .then((res) => expectProblem(res, 401));
  });
});

describe('the edge', () => {
  it('refuses malformed JSON (400) and another content type (415)', async () => {
    const post = async (contentType: string, body: string) =>
      s.system.http
        .post(V2)
        .set('authorization', await s.system.auth('alice'))
        .set('content-type', contentType)
        .send(body);
    await given(nothing)
      .when(() => post('application/json', '{"name":'))
      .then((res) => expectProblem(res, 400));
    await given(nothing)
      .when(() => post('text/plain', 'Jazz'))
      .then((res) => expectProblem(res, 415));
  });

  it('answers a method a documented path does not offer with a 405 problem naming the allowed ones', async () => {
    await given(nothing)
      .when(() => alice.get(`${V2}/p1`))
      .then((res) => {
        expectProblem(res, 405);
        expect(res.headers.allow).toBe('DELETE');
      });
    await given(nothing)
      .when(() => alice.put(`${V2}/p1/bookmarks`, []))
      .then((res) => expectProblem(res, 405));
    await given(nothing)
      .when(() => alice.get(`${V2}/p1/elsewhere`))
      .then((res) => expectProblem(res, 404));
  });
});
