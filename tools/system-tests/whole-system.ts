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
import { exportStreamId } from '../../apps/export-worker/src/domain/aggregate';
import { FileExportStorage } from '../../apps/export-worker/src/worker/storage';
import { createHistoryService } from '../../apps/history-svc/src/app';
import { createPlaylistService } from '../../apps/playlist-svc/src/app';
import { createPreferenceService } from '../../apps/preference-svc/src/app';
import { createProfileService } from '../../apps/profile-svc/src/app';

/** The export stream of a user, for tests that compare streams before and after (only this file may import apps). */
export { exportStreamId };

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
