import { createApiClient, type ApiClient } from '@udp/api-client';
import { given } from '@udp/test-kit';
import type { TestSystem } from '@udp/test-system';
import { startWholeSystem } from './whole-system';

/**
 * The generated client (libs/api-client: openapi-typescript types of the OpenAPI document, openapi-fetch over the
 * global fetch) against the whole system through the gateway on a listening port. Every call below is checked by
 * the type check against the committed types: a breaking change to the document, once the types are regenerated,
 * stops this file from compiling, and the unit test beside the types fails while they are not regenerated.
 */
let system: TestSystem;
let alice: ApiClient;
let bob: ApiClient;
beforeAll(async () => {
  system = await startWholeSystem();
  alice = createApiClient(system.gatewayUrl, { headers: { authorization: await system.auth('typed-alice') } });
  bob = createApiClient(system.gatewayUrl, { headers: { authorization: await system.auth('typed-bob') } });
});
afterAll(() => system.stop());
const nothing = () => undefined;

describe('history through the typed client', () => {
  it('given an item written with POST, when the history is read, then it is there with what was sent', async () => {
    await given(async () => {
      const added = await alice.POST('/api/history/v2', {
        body: { item_id: 'urn:typed:1', last_playback_position: 12.5, date: 1_700_000_000_000 },
      });
      expect(added.response.status).toBe(200);
      expect(added.data).toMatchObject({ item_id: 'urn:typed:1', last_playback_position: 12.5, date: 1_700_000_000_000, deleted: false });
    })
      .when(() => alice.GET('/api/history/v2', { params: { query: { limit: 10 } } }))
      .then((listed) => {
        expect(listed.error).toBeUndefined();
        expect(listed.data?.data.map((item) => item.item_id)).toEqual(['urn:typed:1']);
        expect(listed.data?.total).toBe(1);
      });

    await given(nothing)
      .when(() => alice.GET('/api/history/v2/positions', { params: { query: { item_ids: 'urn:typed:1' } } }))
      .then((positions) => {
        expect(positions.data).toEqual({ 'urn:typed:1': 12.5 });
        expect(positions.response.headers.get('sync-token')).toMatch(/./);
      });

    // Another user reads their own (empty) history.
    await given(nothing)
      .when(() => bob.GET('/api/history/v2'))
      .then((theirs) => expect(theirs.data?.data).toEqual([]));
  });

  it('a refused write answers the problem+json as `error`', async () => {
    await given(nothing)
      .when(() =>
        // @ts-expect-error item_id is a string in the document: the typed client refuses a number at compile time.
        alice.POST('/api/history/v2', { body: { item_id: 42 } }),
      )
      .then((refused) => {
        expect(refused.data).toBeUndefined();
        expect(refused.response.status).toBe(400);
        expect(refused.error).toMatchObject({ status: 400, errors: [expect.objectContaining({ field: 'item_id' })] });
      });
  });
});

describe('preferences through the typed client', () => {
  it('given a document stored with PUT, when it is read whole and under a path, then both answer what was stored', async () => {
    // A key with characters that need encoding: openapi-fetch encodes path parameters, the service decodes them.
    const key = 'ui settings/v1';
    await given(async () => {
      const put = await alice.PUT('/api/preference/{key}', { params: { path: { key } }, body: { theme: 'dark', volume: { level: 7 } } });
      expect(put.response.status).toBe(201);
      expect(put.data).toEqual({ theme: 'dark', volume: { level: 7 } });
    })
      .when(() => alice.GET('/api/preference/{key}', { params: { path: { key } } }))
      .then((read) => expect(read.data).toEqual({ theme: 'dark', volume: { level: 7 } }));

    await given(nothing)
      .when(() => alice.GET('/api/preference'))
      .then((keys) => expect(keys.data).toEqual([key]));
    await given(nothing)
      .when(() => alice.GET('/api/preference/{key}/{path}', { params: { path: { key, path: 'volume' } } }))
      .then((level) => expect(level.data).toEqual({ level: 7 }));
    // The path runs to the end of the URL (x-rest-parameter): the client sends its slashes as slashes, not %2F.
    await given(nothing)
      .when(() => alice.GET('/api/preference/{key}/{path}', { params: { path: { key, path: 'volume/level' } } }))
      .then((deep) => expect(deep.data).toBe(7));

    await given(nothing)
      .when(() => bob.GET('/api/preference/{key}', { params: { path: { key } } }))
      .then((missing) => {
        expect(missing.response.status).toBe(404);
        expect(missing.error?.status).toBe(404);
      });
  });
});

describe('playlists and profile through the typed client', () => {
  it('given a playlist created with an item, when it is read by business id, then it holds the bookmark', async () => {
    await given(async () => {
      const created = await alice.POST('/api/playlist/v3/new/bookmarks', {
        body: { businessId: 'favs', name: 'Favourites', itemId: 'urn:typed:2' },
      });
      expect(created.response.status).toBe(201);
      expect(created.data?.itemId).toBe('urn:typed:2');
      return created;
    })
      .when(() => alice.GET('/api/playlist/v3/{playlistBusinessId}', { params: { path: { playlistBusinessId: 'favs' } } }))
      .then((playlist, created) =>
        expect(playlist.data).toMatchObject({
          businessId: 'favs',
          name: 'Favourites',
          bookmarks: [{ itemId: 'urn:typed:2', id: created.data?.id }],
        }),
      );
  });

  it('given a profile updated with PUT, when it is read, then the update is there', async () => {
    await given(async () => {
      const updated = await alice.PUT('/api/profile/v3', { body: { displayName: 'Alice', language: 'fr-CH' } });
      expect(updated.response.status).toBe(200);
    })
      .when(() => alice.GET('/api/profile/v3'))
      .then((profile) => expect(profile.data).toMatchObject({ displayName: 'Alice', language: 'fr-CH', public: false }));
  });
});

it('the public health check answers as the document says (text/plain)', async () => {
  await given(nothing)
    .when(() => createApiClient(system.gatewayUrl).GET('/health/', { parseAs: 'text' }))
    .then((health) => expect({ status: health.response.status, data: health.data }).toEqual({ status: 200, data: 'UP' }));
});
