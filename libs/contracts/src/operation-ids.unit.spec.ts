import { buildOpenApiDocument } from './openapi';

/**
 * Generated clients name their calls after the operationIds (libs/api-client), so each one is a public name: present on
 * every operation, unique, camelCase, and pinned here. Renaming one is a breaking change for every client: change
 * this list in the same commit, on purpose.
 */
const PINNED = {
  'GET /health/': 'getHealth',
  'GET /api/history': 'listHistory',
  'POST /api/history': 'addHistoryItem',
  'DELETE /api/history': 'clearHistory',
  'POST /api/history/batch': 'addHistoryItems',
  'GET /api/history/positions': 'getPlaybackPositions',
  'GET /api/history/v2': 'listHistoryV2',
  'POST /api/history/v2': 'addHistoryItemV2',
  'DELETE /api/history/v2': 'clearHistoryV2',
  'POST /api/history/v2/batch': 'addHistoryItemsV2',
  'GET /api/history/v2/positions': 'getPlaybackPositionsV2',
  'DELETE /api/history/v2/{itemId}': 'deleteHistoryItemV2',
  'DELETE /api/history/{id}': 'deleteHistoryItemById',
  'GET /api/playlist/v2': 'listPlaylistsV2',
  'POST /api/playlist/v2': 'createPlaylistV2',
  'DELETE /api/playlist/v2': 'deleteAllPlaylistsV2',
  'POST /api/playlist/v2/new/bookmarks': 'createPlaylistWithBookmarkV2',
  'GET /api/playlist/v2/{playlistId}/bookmarks': 'getPlaylistV2',
  'POST /api/playlist/v2/{playlistId}/bookmarks': 'addBookmarkV2',
  'DELETE /api/playlist/v2/{playlistId}/bookmarks': 'deleteBookmarksV2',
  'DELETE /api/playlist/v2/{playlistId}/bookmarks/{bookmarks_id}': 'deleteBookmarkV2',
  'DELETE /api/playlist/v2/{playlist_id}': 'deletePlaylistV2',
  'GET /api/playlist/v3': 'listPlaylistsV3',
  'DELETE /api/playlist/v3': 'deleteAllPlaylistsV3',
  'POST /api/playlist/v3/new/bookmarks': 'createPlaylistWithBookmarkV3',
  'GET /api/playlist/v3/{playlistBusinessId}': 'getPlaylistV3',
  'POST /api/playlist/v3/{playlistBusinessId}': 'savePlaylistV3',
  'DELETE /api/playlist/v3/{playlistBusinessId}': 'deletePlaylistV3',
  'POST /api/playlist/v3/{playlistBusinessId}/bookmarks': 'addBookmarkV3',
  'PUT /api/playlist/v3/{playlistBusinessId}/bookmarks': 'addBookmarksV3',
  'DELETE /api/playlist/v3/{playlistBusinessId}/bookmarks': 'deleteBookmarksV3',
  'DELETE /api/playlist/v3/{playlistBusinessId}/bookmarks/{bookmarkId}': 'deleteBookmarkV3',
  'GET /api/preference': 'listPreferenceKeys',
  'GET /api/preference/{key}': 'getPreference',
  'PUT /api/preference/{key}': 'replacePreference',
  'DELETE /api/preference/{key}': 'deletePreference',
  'GET /api/preference/{key}/{path}': 'getPreferenceAtPath',
  'POST /api/preference/{key}/{path}': 'mergePreferenceAtPath',
  'PUT /api/preference/{key}/{path}': 'replacePreferenceAtPath',
  'DELETE /api/preference/{key}/{path}': 'deletePreferenceAtPath',
  'GET /api/profile/v3': 'getProfile',
  'PUT /api/profile/v3': 'updateProfile',
  'GET /api/profile/v3/public/{publicUserId}': 'getPublicProfile',
  'GET /api/v2/items': 'listQcItems',
  'GET /api/v2/items/{id}': 'getQcItem',
  'GET /api/v2/items/{id}/versions/{version}': 'getQcItemVersion',
  'POST /api/data/export': 'startExport',
  'GET /api/data/export': 'listExports',
  'DELETE /api/data/export': 'deleteAllExports',
  'GET /api/data/export/{key}': 'downloadExport',
  'GET /api/data/export/public/{key}': 'downloadPublicExport',
  'DELETE /api/data/export/{key}': 'deleteExport',
  'DELETE /api/data': 'eraseUserData',
  'GET /api/data/erasure/{erasureId}': 'getErasure',
  'GET /api/v1/{codops}/{endpoint}': 'getPersonalisationEndpoint',
  'GET /api/changes': 'streamChanges',
  'POST /api/changes/ticket': 'createChangesTicket',
};

describe('operationIds of the OpenAPI document', () => {
  const operations = Object.entries(buildOpenApiDocument().paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item ?? {})
      .filter(([method]) => ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'].includes(method))
      .map(([method, operation]) => ({
        key: `${method.toUpperCase()} ${path}`,
        operationId: (operation as { operationId?: string }).operationId,
      })),
  );

  it('every operation has one, in camelCase', () => {
    expect(operations.length).toBeGreaterThan(0);
    for (const { key, operationId } of operations)
      expect({ key, operationId }).toEqual({ key, operationId: expect.stringMatching(/^[a-z][a-zA-Z0-9]*$/) });
  });

  it('no two operations share one', () => {
    const ids = operations.map((o) => o.operationId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toStrictEqual([]);
  });

  it('they are the pinned names: a rename, a new or a removed operation changes this list on purpose', () => {
    expect(Object.fromEntries(operations.map((o) => [o.key, o.operationId]))).toEqual(PINNED);
  });
});
