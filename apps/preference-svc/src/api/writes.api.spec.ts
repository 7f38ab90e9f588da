import { apiSpecification } from '@udp/test-system';
import { createPreferenceService } from '../app';
import { type PreferenceEvent, type PreferenceOperation, preferenceStream } from '../domain/aggregate';

/** Every write endpoint of preference-svc, at a key and at a path: given the document's events, when a request, then the answer and the new events. */
const spec = apiSpecification<PreferenceEvent>({
  prefixes: ['/api/preference'],
  create: (deps) => createPreferenceService({ ...deps, now: () => 1_700_000_000_000 }),
});

const settings = preferenceStream('alice', 'settings');
const written = (
  document: Record<string, unknown>,
  operation: PreferenceOperation = { kind: 'replace' },
  key = 'settings',
): PreferenceEvent => ({
  type: 'PreferenceWritten',
  data: { key, document, operation },
});
const stored = { theme: 'dark', player: { volume: 5, subtitles: true }, tags: ['a', 'b'] };

describe('/api/preference/{key}', () => {
  it('PUT creates the document (201) and replaces it (200); the same document again writes nothing', async () => {
    await spec
      .given(settings)
      .and(preferenceStream('bob', 'settings'), [written({ theme: 'light' })])
      .when({ as: 'alice', method: 'put', path: '/api/preference/settings', body: { theme: 'dark' } })
      .then({ status: 201, body: { theme: 'dark' }, events: [written({ theme: 'dark' })] });
    await spec
      .given(settings, [written(stored)])
      .when({ as: 'alice', method: 'put', path: '/api/preference/settings', body: { theme: 'light' } })
      .then({ status: 200, body: { theme: 'light' }, events: [written({ theme: 'light' })] });
    await spec
      .given(settings, [written(stored)])
      .when({ as: 'alice', method: 'put', path: '/api/preference/settings', body: stored })
      .then({ status: 200, body: stored, events: [] });
  });

  it('PUT of a document that is not an object is refused and writes nothing', () =>
    spec
      .given(settings, [written(stored)])
      .when({ as: 'alice', method: 'put', path: '/api/preference/settings', body: [1, 2] })
      .then({ status: 400, body: expect.objectContaining({ status: 400 }), events: [] }));

  it('PUT at a key with a slash or a percent writes the stream of exactly that key', () =>
    spec
      .given(preferenceStream('alice', 'a/b%'))
      .and(preferenceStream('alice', 'a'))
      .when({ as: 'alice', method: 'put', path: '/api/preference/a%2Fb%25', body: { x: 1 } })
      .then({ status: 201, body: { x: 1 }, events: [written({ x: 1 }, { kind: 'replace' }, 'a/b%')] }));

  it('DELETE deletes the document; an unknown key is 404', async () => {
    await spec
      .given(settings, [written(stored)])
      .when({ as: 'alice', method: 'delete', path: '/api/preference/settings' })
      .then({ status: 204, events: [{ type: 'PreferenceDeleted', data: { key: 'settings' } }] });
    await spec
      .given(settings)
      .and(preferenceStream('bob', 'settings'), [written(stored)])
      .when({ as: 'alice', method: 'delete', path: '/api/preference/settings' })
      .then({ status: 404, body: expect.objectContaining({ status: 404 }), events: [] });
  });

  it('DELETE with a jsonpath removes the matches; no match writes nothing; `$` deletes the document', async () => {
    await spec
      .given(settings, [written(stored)])
      .when({ as: 'alice', method: 'delete', path: '/api/preference/settings', query: { jsonpath: '$.player.volume' } })
      .then({
        status: 204,
        events: [
          written(
            { theme: 'dark', player: { subtitles: true }, tags: ['a', 'b'] },
            { kind: 'deleteJsonPath', jsonpath: '$.player.volume', removed: 1 },
          ),
        ],
      });
    await spec
      .given(settings, [written(stored)])
      .when({ as: 'alice', method: 'delete', path: '/api/preference/settings', query: { jsonpath: '$.nothing' } })
      .then({ status: 204, events: [] });
    await spec
      .given(settings, [written(stored)])
      .when({ as: 'alice', method: 'delete', path: '/api/preference/settings', query: { jsonpath: '$' } })
      .then({ status: 204, events: [{ type: 'PreferenceDeleted', data: { key: 'settings' } }] });
  });
});

describe('/api/preference/{key}/{path}', () => {
  it('PUT sets the value at the path (200), creating the document when missing (201)', async () => {
    await spec
      .given(settings, [written(stored)])
      .when({ as: 'alice', method: 'put', path: '/api/preference/settings/player/volume', body: 9 })
      .then({
        status: 200,
        body: 9,
        events: [written({ ...stored, player: { volume: 9, subtitles: true } }, { kind: 'putPath', path: ['player', 'volume'] })],
      });
    await spec
      .given(settings)
      .when({ as: 'alice', method: 'put', path: '/api/preference/settings/player', body: { volume: 1 } })
      .then({ status: 201, body: { volume: 1 }, events: [written({ player: { volume: 1 } }, { kind: 'putPath', path: ['player'] })] });
  });

  it('POST merges the payload into the object at the path', () =>
    spec
      .given(settings, [written(stored)])
      .when({ as: 'alice', method: 'post', path: '/api/preference/settings/player', body: { payload: { quality: 'hd' } } })
      .then({
        status: 200,
        body: { volume: 5, subtitles: true, quality: 'hd' },
        events: [written({ ...stored, player: { volume: 5, subtitles: true, quality: 'hd' } }, { kind: 'mergePath', path: ['player'] })],
      }));

  it('POST without a payload is refused and writes nothing', () =>
    spec
      .given(settings, [written(stored)])
      .when({ as: 'alice', method: 'post', path: '/api/preference/settings/player', body: { quality: 'hd' } })
      .then({ status: 400, body: expect.objectContaining({ status: 400 }), events: [] }));

  it('DELETE removes the value at the path; a path without a value is 404', async () => {
    await spec
      .given(settings, [written(stored)])
      .when({ as: 'alice', method: 'delete', path: '/api/preference/settings/player/subtitles' })
      .then({
        status: 204,
        events: [written({ ...stored, player: { volume: 5 } }, { kind: 'deletePath', path: ['player', 'subtitles'] })],
      });
    await spec
      .given(settings, [written(stored)])
      .when({ as: 'alice', method: 'delete', path: '/api/preference/settings/player/nothing' })
      .then({ status: 404, body: expect.objectContaining({ status: 404 }), events: [] });
  });
});
