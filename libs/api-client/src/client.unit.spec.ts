import { createApiClient } from './index';

/** The client on a fake fetch that records what it would send and answers 200 `{}`. */
function recordingClient() {
  const sent: string[] = [];
  const client = createApiClient('http://api.test', {
    fetch: async (request: Request) => {
      sent.push(`${request.method} ${request.url}`);
      return new Response('{}', { headers: { 'content-type': 'application/json' } });
    },
  });
  return { client, sent };
}

describe('createApiClient', () => {
  it('encodes path parameters: a key with a slash, a space or a question mark stays one segment', async () => {
    const { client, sent } = recordingClient();
    await client.GET('/api/preference/{key}', { params: { path: { key: 'ui settings/v1?' } } });
    expect(sent).toEqual(['GET http://api.test/api/preference/ui%20settings%2Fv1%3F']);
  });

  it('sends the slashes of a parameter that holds them (the preference path) as they are, each segment encoded', async () => {
    const { client, sent } = recordingClient();
    await client.GET('/api/preference/{key}/{path}', { params: { path: { key: 'a/b', path: 'favorites/urn:show:1/da te' } } });
    expect(sent).toEqual(['GET http://api.test/api/preference/a%2Fb/favorites/urn%3Ashow%3A1/da%20te']);
  });

  it.each(['a/../b', '..', 'a/.'])('refuses a preference path %j with a dot segment before sending anything', async (path) => {
    const { client, sent } = recordingClient();
    await expect(client.GET('/api/preference/{key}/{path}', { params: { path: { key: 'k', path } } })).rejects.toThrow(
      /would address another resource/,
    );
    expect(sent).toEqual([]);
  });

  // fetch resolves `.` and `..` segments, and an empty one addresses the collection: the request would reach another
  // resource (GET /api/preference/{key} with key "." answers the list of keys, 200, as if it were the document).
  it.each(['.', '..', ''])('refuses the path parameter %j before sending anything', async (key) => {
    const { client, sent } = recordingClient();
    await expect(client.GET('/api/preference/{key}', { params: { path: { key } } })).rejects.toThrow(
      `path parameter key of /api/preference/{key} is ${JSON.stringify(key)}`,
    );
    await expect(client.DELETE('/api/playlist/v3/{playlistBusinessId}', { params: { path: { playlistBusinessId: key } } })).rejects.toThrow(
      /would address another resource/,
    );
    expect(sent).toEqual([]);
  });
});
