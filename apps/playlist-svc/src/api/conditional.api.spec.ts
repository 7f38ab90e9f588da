import { type PlaylistSystem, sequentialIds, startPlaylistSystem } from '../testing/playlist-system';

let s: PlaylistSystem;
beforeEach(async () => {
  s = await startPlaylistSystem({ newId: sequentialIds('t') });
});
afterEach(() => s.stop());

describe.each(['/api/playlist/v2', '/api/playlist/v3'])('conditional GET %s', (path) => {
  it('answers 304 without a body while the list is unchanged, and the new list once it changed', async () => {
    const alice = await s.as('alice');
    const first = await alice.get(path);
    expect(first.status).toBe(200);
    const etag = first.headers.etag;
    expect(etag).toMatch(/^W\/".+"$/);
    const unchanged = await alice.get(path).set('if-none-match', etag);
    expect([unchanged.status, unchanged.text ?? '']).toEqual([304, '']);
    await alice.post('/api/playlist/v3/p1', { name: 'P1' });
    const changed = await alice.get(path).set('if-none-match', etag);
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.body.playlists).toHaveLength(2);
    // Bob's list differs from alice's (another technical id): her ETag does not fit it.
    const bob = await s.as('bob');
    await bob.post('/api/playlist/v3/p1', { name: 'P1' });
    expect((await bob.get(path).set('if-none-match', changed.headers.etag)).status).toBe(200);
  });
});
