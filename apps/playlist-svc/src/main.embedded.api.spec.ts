import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { IDENTITY_HEADER, InternalIdentity, fileSecret } from '@udp/auth';
import { given } from '@udp/test-kit';
import { start } from './main';

/**
 * The real entry point, configured by the environment as in the embedded mode: a SQLite event store in
 * DATA_DIR, the limits from PLAYLIST_MAX_*, and read models rebuilt from the store at every start.
 */
const dir = mkdtempSync(join(tmpdir(), 'playlist-main-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('takes its limits from the environment and keeps acknowledged writes across a restart', async () => {
  const env = {
    DATA_DIR: dir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    PLAYLIST_MAX_BOOKMARKS: '2',
    PLAYLIST_MAX_PLAYLISTS: '1',
  };
  const identity = new InternalIdentity(fileSecret(dir, 'internal-identity'));
  const as = (userId: string) => ({ [IDENTITY_HEADER]: identity.sign({ userId }) });

  const nothing = () => undefined;

  const first = await start(env);
  const http = request(`http://127.0.0.1:${first.port}`);
  await given(async () => {
    expect(
      (await http.post('/api/playlist/v3/new/bookmarks').set(as('gina')).send({ businessId: 'fav', itemId: 'a', name: 'Fav' })).status,
    ).toBe(201);
    expect((await http.post('/api/playlist/v3/fav/bookmarks').set(as('gina')).send({ itemId: 'b' })).status).toBe(201);
  })
    .when(() => http.post('/api/playlist/v3/fav/bookmarks').set(as('gina')).send({ itemId: 'c' }))
    .then((full) => expect([full.status, full.body.title, full.body.limit]).toEqual([422, 'Quota Exceeded', 'PLAYLIST_MAX_BOOKMARKS']));
  await given(nothing)
    .when(() => http.post('/api/playlist/v2').set(as('gina')).send({ name: 'Second' }))
    .then((tooMany) =>
      expect([tooMany.status, tooMany.body.detail]).toEqual([
        422,
        'a user has at most 1 playlists besides watch later (PLAYLIST_MAX_PLAYLISTS)',
      ]),
    );
  await given(nothing)
    .when(() => http.get('/api/playlist/v3').set({ [IDENTITY_HEADER]: 'forged' }))
    .then((res) => expect(res.status).toBe(401));

  await given(async () => {
    await http.post('/api/playlist/v2/watch_later/bookmarks').set(as('gina')).send({ media_id: 'w' });
    const before = (await http.get('/api/playlist/v3').set(as('gina'))).body;
    await first.stop();
    return before;
  })
    .when(() => start(env))
    .then(async (second, before) => {
      const again = request(`http://127.0.0.1:${second.port}`);
      expect((await again.get('/health/')).text).toBe('UP');
      expect((await again.get('/api/playlist/v3').set(as('gina'))).body).toEqual(before);
      expect(
        (await again.get('/api/playlist/v3/fav').set(as('gina'))).body.bookmarks.map((b: { itemId: string }) => b.itemId).sort(),
      ).toEqual(['a', 'b']);
      // The per-user bookmark sequence continues after the restart.
      expect((await again.post('/api/playlist/v3/watch_later/bookmarks').set(as('gina')).send({ itemId: 'x' })).body.id).toBe(4);
      await second.stop();
    });
});
