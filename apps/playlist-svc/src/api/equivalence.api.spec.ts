import { given } from '@udp/test-kit';
import type { FullPlaylist, FullPlaylistV3, PlaylistMetaData, PlaylistMetaDataV3 } from '@udp/contracts';
import { type PlaylistSystem, type UserClient, T0, startPlaylistSystem } from '../testing/playlist-system';

/**
 * One data set, two views: v2 `media_id` = v3 `itemId`, v2 `system` = v3 `type: watch_later`, and a playlist
 * created through v2 is found through v3 by its technical id (its business id).
 */
const V2 = '/api/playlist/v2';
const V3 = '/api/playlist/v3';
let s: PlaylistSystem;
let user: UserClient;

beforeEach(async () => {
  s = await startPlaylistSystem({ limits: { maxPlaylists: 50, maxBookmarks: 100 } });
  user = await s.as('carol');
});
afterEach(() => s.stop());

/** The v3 view of a playlist as v2 would show it. */
const asV2 = (p: FullPlaylistV3): FullPlaylist => ({
  bookmarks: p.bookmarks.map((b) => ({ date: b.date, id: b.id, media_id: b.itemId })),
  id: p.id,
  name: p.name,
  system: p.type === 'watch_later',
});
const metaAsV2 = (p: PlaylistMetaDataV3): PlaylistMetaData => ({
  id: p.id,
  name: p.name,
  system: p.type === 'watch_later',
  bookmarks_count: p.bookmarksCount,
  last_update: p.lastUpdate,
});

/** Reads everything through both versions and checks they tell the same. */
async function expectSameThroughBothVersions(): Promise<FullPlaylistV3[]> {
  const list2 = (await user.get(V2)).body.playlists as PlaylistMetaData[];
  const list3 = (await user.get(V3)).body.playlists as PlaylistMetaDataV3[];
  expect(list2).toEqual(list3.map(metaAsV2));
  const full: FullPlaylistV3[] = [];
  for (const meta of list3) {
    const v3 = (await user.get(`${V3}/${encodeURIComponent(meta.businessId)}`)).body as FullPlaylistV3;
    const v2 = (await user.get(`${V2}/${encodeURIComponent(meta.id)}/bookmarks`)).body as FullPlaylist;
    expect(v2).toEqual(asV2(v3));
    expect(v3.bookmarks).toHaveLength(meta.bookmarksCount);
    full.push(v3);
  }
  return full;
}

it('a playlist created through v2 is read through v3 by its technical id, with the same bookmarks', async () => {
  await given(async () => {
    const created = (await user.post(`${V2}/new/bookmarks`, { media_id: 'urn:a', name: 'Jazz' })).body;
    await user.post(`${V2}/${created.playlist_id}/bookmarks`, { media_id: 'urn:b', date: T0 - 10 });
    return created;
  })
    .when((created) => user.get(`${V3}/${created.playlist_id}`))
    .then(async (v3, created) => {
      expect(v3.body).toEqual({
        bookmarks: [
          { date: T0, id: created.bookmark_id, itemId: 'urn:a' },
          { date: T0 - 10, id: 2, itemId: 'urn:b' },
        ],
        businessId: created.playlist_id,
        id: created.playlist_id,
        name: 'Jazz',
        type: 'standard',
      });
      await expectSameThroughBothVersions();
    });
});

it('a playlist created through v3 is read through v2 by the technical id v3 answers', async () => {
  const favourites = async () => {
    const meta = (await user.post(`${V3}/favourites`, { name: 'Favourites' })).body;
    await user.put(`${V3}/favourites/bookmarks`, [{ itemId: 'x' }, { itemId: 'y', date: T0 - 1 }]);
    return meta;
  };
  await given(favourites)
    .when((meta) => user.get(`${V2}/${meta.id}/bookmarks`))
    .then(async (res, meta) => {
      expect(res.body).toEqual({
        bookmarks: [
          { date: T0, id: 1, media_id: 'x' },
          { date: T0 - 1, id: 2, media_id: 'y' },
        ],
        id: meta.id,
        name: 'Favourites',
        system: false,
      });
      expectProblem404(await user.get(`${V2}/favourites/bookmarks`)); // v2 knows technical ids only
    });
});

it('the system playlist of v2 is watch later of v3, writes through either are seen by both', async () => {
  await given(async () => expect((await user.post(`${V2}/watch_later/bookmarks`, { media_id: 'm1' })).status).toBe(201))
    // The same item through v3 is the same bookmark.
    .when(() => user.post(`${V3}/watch_later/bookmarks`, { itemId: 'm1' }))
    .then((again) => expect([again.status, again.body.id]).toEqual([200, 1]));

  await given(() => user.post(`${V3}/watch_later/bookmarks`, { itemId: 'm2' }))
    .when(() => user.delete(`${V2}/watch_later/bookmarks/1`))
    .then(async (deleted) => {
      expect(deleted.status).toBe(204);
      const [watchLater] = await expectSameThroughBothVersions();
      expect(watchLater).toMatchObject({ type: 'watch_later', bookmarks: [{ id: 2, itemId: 'm2' }] });
      expect((await user.get(V2)).body.playlists[0]).toMatchObject({ id: 'watch_later', system: true, bookmarks_count: 1 });
    });
});

it('after a mixed sequence of writes through both versions, both views agree on everything', async () => {
  /** 80 writes of every kind through both versions, checking the views agree every 10: their statuses. */
  const mixedWrites = async () => {
    const statuses: number[] = [];
    // A small deterministic generator, so a failure can be replayed.
    let seed = 42;
    const random = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
    const items = ['urn:1', 'urn:2', 'urn:3', 'urn:4', 'urn:5', 'urn:6'];
    const write = async (req: PromiseLike<{ status: number }>) => void statuses.push((await req).status);
    for (let step = 0; step < 80; step++) {
      s.clock.now = T0 + step * 1000;
      const current = (await user.get(V3)).body.playlists as PlaylistMetaDataV3[];
      const target = current[random(current.length)];
      const item = items[random(items.length)];
      const date = random(2) ? T0 + step * 1000 - random(5000) : undefined;
      switch (random(9)) {
        case 0:
          await write(user.post(`${V2}/new/bookmarks`, { media_id: item, name: `v2 list ${step}` }));
          break;
        case 1:
          await write(user.post(`${V3}/new/bookmarks`, { businessId: `b${random(4)}`, itemId: item, name: `v3 list ${step}`, date }));
          break;
        case 2:
          await write(user.post(`${V2}/${target.id}/bookmarks`, { media_id: item, date }));
          break;
        case 3:
          await write(user.post(`${V3}/${encodeURIComponent(target.businessId)}/bookmarks`, { itemId: item, date }));
          break;
        case 4:
          await write(
            user.put(`${V3}/${encodeURIComponent(target.businessId)}/bookmarks`, [
              { itemId: item, date },
              { itemId: items[random(items.length)] },
            ]),
          );
          break;
        case 5:
          await write(user.delete(`${V3}/${encodeURIComponent(target.businessId)}/bookmarks?mediaIds=${item}`));
          break;
        case 6: {
          const bookmarks = (await user.get(`${V2}/${target.id}/bookmarks`)).body.bookmarks as Array<{ id: number }>;
          if (bookmarks.length) await write(user.delete(`${V2}/${target.id}/bookmarks/${bookmarks[random(bookmarks.length)].id}`));
          break;
        }
        case 7:
          if (target.type === 'standard')
            await write(random(2) ? user.delete(`${V2}/${target.id}`) : user.delete(`${V3}/${encodeURIComponent(target.businessId)}`));
          break;
        case 8:
          await write(user.post(`${V3}/${encodeURIComponent(target.businessId)}`, { name: `renamed ${step}` }));
          break;
      }
      if (step % 10 === 9) await expectSameThroughBothVersions();
    }
    return statuses;
  };
  await given(() => undefined)
    .when(mixedWrites)
    .then(async (statuses) => {
      const all = await expectSameThroughBothVersions();
      // Every write was accepted, and the sequence left something worth comparing.
      expect(statuses.length).toBeGreaterThan(60);
      expect(statuses.filter((status) => status >= 300)).toEqual([]);
      expect(all.length).toBeGreaterThan(2);
      expect(all.filter((p) => p.bookmarks.length > 1).length).toBeGreaterThan(1);
      // Bookmark ids are unique across the user's playlists.
      const ids = all.flatMap((p) => p.bookmarks.map((b) => b.id));
      expect(new Set(ids).size).toBe(ids.length);
      // One bookmark per item per playlist.
      for (const p of all) expect(new Set(p.bookmarks.map((b) => b.itemId)).size).toBe(p.bookmarks.length);
    });
});

function expectProblem404(res: { status: number; headers: Record<string, string> }) {
  expect(res.status).toBe(404);
  expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
}
