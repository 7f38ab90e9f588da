import { given } from '@udp/test-kit';
import { type PlaylistSystem, sequentialIds, startPlaylistSystem } from '../testing/playlist-system';

let s: PlaylistSystem;
beforeEach(async () => {
  s = await startPlaylistSystem({ newId: sequentialIds('t') });
});
afterEach(() => s.stop());

describe.each(['/api/playlist/v2', '/api/playlist/v3'])('conditional GET %s', (path) => {
  it('answers 304 without a body while the list is unchanged, and the new list once it changed', async () => {
    const alice = await s.as('alice');
    /** Alice's list, read once: its ETag. */
    const readOnce = async () => {
      const first = await alice.get(path);
      expect(first.status).toBe(200);
      expect(first.headers.etag).toMatch(/^W\/".+"$/);
      return first.headers.etag as string;
    };

    await given(readOnce)
      .when((etag) => alice.get(path).set('if-none-match', etag))
      .then((unchanged) => expect([unchanged.status, unchanged.text ?? '']).toEqual([304, '']));

    let changedEtag = '';
    await given(async () => {
      const etag = await readOnce();
      await alice.post('/api/playlist/v3/p1', { name: 'P1' });
      return etag;
    })
      .when((etag) => alice.get(path).set('if-none-match', etag))
      .then((changed, etag) => {
        expect(changed.status).toBe(200);
        expect(changed.headers.etag).not.toBe(etag);
        expect(changed.body.playlists).toHaveLength(2);
        changedEtag = changed.headers.etag;
      });

    // Bob's list differs from alice's (another technical id): her ETag does not fit it.
    const bob = await s.as('bob');
    await given(() => bob.post('/api/playlist/v3/p1', { name: 'P1' }))
      .when(() => bob.get(path).set('if-none-match', changedEtag))
      .then((answer) => expect(answer.status).toBe(200));
  });
});
