/**
 * Every service behind the real gateway, in this process, on memory adapters (libs/test-system): for tests that
 * look at the whole public surface at once (isolation between users, edge cases every service must share).
 */
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCatalogueService } from '../../apps/catalogue-svc/src/app';
import { createExportWorker } from '../../apps/export-worker/src/app';
import { erasureStreams, exportStreamId, exportStreams, pendingErasureStreamId } from '../../apps/export-worker/src/domain/aggregate';
import { historyStreamId, historyStreams } from '../../apps/history-svc/src/domain/aggregate';
import { playlistsStream, playlistsStreams } from '../../apps/playlist-svc/src/domain/aggregate';
import { preferenceQuotaStreams, preferenceStreamId, preferenceStreams } from '../../apps/preference-svc/src/domain/aggregate';
import { profileStreamId, profileStreams } from '../../apps/profile-svc/src/domain/aggregate';
import { itemStreams } from '../../apps/catalogue-svc/src/domain/aggregate';
import { qcItem } from '../../apps/catalogue-svc/src/testing/catalogue';
import { FileExportStorage } from '../../apps/export-worker/src/worker/storage';
import { createHistoryService } from '../../apps/history-svc/src/app';
import { createPlaylistService } from '../../apps/playlist-svc/src/app';
import { createPreferenceService } from '../../apps/preference-svc/src/app';
import { createProfileService } from '../../apps/profile-svc/src/app';

/** The export stream of a user, for tests that compare streams before and after (only this file may import apps). */
/** The services' stream names, for the specs that look into the stores (they may not import an app themselves). */
export { exportStreamId, historyStreamId, playlistsStream, preferenceStreamId, profileStreamId, qcItem };

/** Every aggregate's streams, for the check that no category is a prefix of another. */
export const STREAMS_OF_EVERY_AGGREGATE = [
  itemStreams,
  exportStreams,
  erasureStreams,
  { category: pendingErasureStreamId('') },
  historyStreams,
  playlistsStreams,
  preferenceStreams,
  preferenceQuotaStreams,
  profileStreams,
];

export function startWholeSystem(): Promise<TestSystem> {
  return startTestSystem([
    { prefixes: ['/api/history'], create: (deps) => createHistoryService(deps) },
    { prefixes: ['/api/playlist'], create: (deps) => createPlaylistService(deps) },
    { prefixes: ['/api/preference'], create: (deps) => createPreferenceService(deps) },
    { prefixes: ['/api/profile'], create: (deps) => createProfileService({ ...deps, publicProfilesEnabled: true }) },
    { prefixes: ['/api/v2/items', '/api/v2/icons'], public: true, create: (deps) => createCatalogueService(deps) },
    {
      prefixes: ['/api/data'],
      publicPrefixes: ['/api/data/export/public'],
      // Gathers the user's data from the services above over HTTP, as in production.
      create: (deps) =>
        createExportWorker({
          ...deps,
          storage: new FileExportStorage(join(mkdtempSync(join(tmpdir(), 'udp-whole-system-')), 'exports')),
          sources: () => ({
            history: deps.serviceUrls['/api/history'],
            playlist: deps.serviceUrls['/api/playlist'],
            preference: deps.serviceUrls['/api/preference'],
            profile: deps.serviceUrls['/api/profile'],
          }),
          callbackSecret: 'w'.repeat(40),
        }),
    },
  ]);
}
