import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@udp/eventstore';
import { type ErasureBackends, bytesFoundUnder, eraseUserOnBus } from '@udp/test-system';
import { type PlaylistSystem, T0, startPlaylistSystem } from '../testing/playlist-system';

/** User-data erasure (issue 10): a request on the bus, then playlist-svc knows nothing of the user. */
export function playlistErasureSuite(kind: string, openBackends: () => Promise<ErasureBackends>) {
  let backends: ErasureBackends;
  const V2 = '/api/playlist/v2';
  const V3 = '/api/playlist/v3';
  let dataDir: string;
  let s: PlaylistSystem;
  // Distinctive ids, so that a scan of the raw SQLite bytes finds them if anything is left.
  const erasee = `erasee${randomUUID().replace(/-/g, '')}`;
  const keeper = `keeper${randomUUID().replace(/-/g, '')}`;
  const itemOf = (user: string, i: number) => `urn:${user}:item${i}`;
  const playlistOf = (user: string, i: number) => `${user}-list${i}`;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'udp-playlist-erasure-'));
    backends = await openBackends();
    s = await startPlaylistSystem({
      store: new SqliteEventStore(join(dataDir, 'playlist-svc', 'events.sqlite')),
      readModels: backends.readModels,
      bus: backends.bus,
    });
  });
  afterEach(async () => {
    await s.stop();
    await backends.dispose?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function fillPlaylists(user: string) {
    const client = await s.as(user);
    for (let p = 0; p < 3; p++) {
      expect((await client.post(`${V3}/${playlistOf(user, p)}`, { name: `${user} list ${p}` })).status).toBe(201);
      for (let i = 0; i < 3; i++)
        expect((await client.post(`${V3}/${playlistOf(user, p)}/bookmarks`, { itemId: itemOf(user, p * 10 + i) })).status).toBeLessThan(
          300,
        );
    }
    for (let i = 100; i < 103; i++)
      expect((await client.post(`${V3}/watch_later/bookmarks`, { itemId: itemOf(user, i) })).status).toBeLessThan(300);
  }

  /** Every read endpoint of playlist-svc in both versions, including the user's own playlists by id. */
  async function answers(user: string, playlistIds: string[]) {
    const client = await s.as(user);
    const paths = [V3, `${V3}/watch_later`, V2, ...playlistIds.flatMap((id) => [`${V3}/${id}`, `${V2}/${id}/bookmarks`])];
    return Promise.all(
      paths.map(async (path) => {
        const res = await client.get(path);
        return { path, status: res.status, body: res.body as unknown };
      }),
    );
  }

  describe(`erasure of a user in playlist-svc (${kind})`, () => {
    it('answers every endpoint for the erased user as for a new one, keeps the others, and leaves no byte of the user on disk', async () => {
      await fillPlaylists(erasee);
      await fillPlaylists(keeper);
      const ids = (user: string) => [0, 1, 2].map((p) => playlistOf(user, p));
      // The erasee's technical playlist ids too, as v2 addresses playlists by them.
      const technical = ((await (await s.as(erasee)).get(V3)).body.playlists as Array<{ id: string }>).map((p) => p.id);
      const probe = [...ids(erasee), ...technical];
      const keeperBefore = await answers(keeper, ids(keeper));
      const newUser = await answers(`newcomer${randomUUID()}`, probe);
      expect(await answers(erasee, probe)).not.toEqual(newUser);
      expect(bytesFoundUnder(dataDir, [erasee]).length).toBeGreaterThan(0);

      const confirmations = await eraseUserOnBus(s.system, erasee);
      expect(confirmations).toEqual([
        expect.objectContaining({ userId: erasee, service: 'playlist-svc', streamsDeleted: 1, documentsDeleted: 4 }),
      ]);

      expect(await answers(erasee, probe)).toEqual(newUser);
      expect(await answers(keeper, ids(keeper))).toEqual(keeperBefore);
      const needles = [erasee, ...[0, 1, 2, 10, 11, 12, 20, 21, 22, 100, 101, 102].map((i) => itemOf(erasee, i)), ...ids(erasee)];
      expect(bytesFoundUnder(dataDir, needles)).toEqual([]);
      expect(bytesFoundUnder(dataDir, [keeper]).length).toBeGreaterThan(0);
      expect((await backends.leftovers?.(needles)) ?? []).toEqual([]);
      expect((await backends.leftovers?.([keeper]))?.length ?? 1).toBeGreaterThan(0);
    });

    it("recreates watch later fresh and empty on the erased user's next write", async () => {
      await fillPlaylists(erasee);
      await eraseUserOnBus(s.system, erasee);
      const client = await s.as(erasee);
      s.clock.now = T0 + 5;
      expect((await client.post(`${V3}/watch_later/bookmarks`, { itemId: 'urn:after' })).status).toBeLessThan(300);
      const { body } = await client.get(`${V3}/watch_later`);
      expect(body.bookmarks.map((b: { itemId: string }) => b.itemId)).toEqual(['urn:after']);
      expect((await client.get(V3)).body.playlists.map((p: { businessId: string }) => p.businessId)).toEqual(['watch_later']);
    });
  });
}
