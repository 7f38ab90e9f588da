import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus } from '@udp/bus';
import { SqliteEventStore } from '@udp/eventstore';
import { given, waitUntil } from '@udp/test-kit';
import { bytesFoundUnder, distinctiveUserId, startTestSystem, type TestSystem, userClient } from '@udp/test-system';
import { createExportWorker } from '../../apps/export-worker/src/app';
import { exportStreamId } from '../../apps/export-worker/src/domain/aggregate';
import { FileExportStorage } from '../../apps/export-worker/src/worker/storage';
import { createProfileService } from '../../apps/profile-svc/src/app';
import { profileStreamId } from '../../apps/profile-svc/src/domain/aggregate';

/**
 * Issue 18 #3: an export in flight must not bring an erased user back. The real profile-svc and export-worker behind
 * the gateway, on SQLite event stores in one data directory and one in-process bus; history, playlists and preferences
 * come from a stand-in that holds the history page back, so the erasure lands while the export is being built.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'udp-erasure-export-'));
const bus = new InProcessBus(5);
const profileStore = new SqliteEventStore(join(dataDir, 'profile-svc', 'events.sqlite'));
const workerStore = new SqliteEventStore(join(dataDir, 'export-worker', 'events.sqlite'));
let system: TestSystem;
let sources: Server;
let sourcesUrl: string;
const held: ServerResponse[] = [];
let abortedReads = 0;

beforeAll(async () => {
  sources = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/api/history/v2') {
      // Held until the test answers it; a read the worker gives up is counted.
      res.on('close', () => void (!res.writableFinished && abortedReads++));
      return void held.push(res);
    }
    const body = path === '/api/playlist/v3' ? { playlists: [] } : path === '/api/preference' ? [] : null;
    if (body === null) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((r) => sources.listen(0, '127.0.0.1', r));
  sourcesUrl = `http://127.0.0.1:${(sources.address() as { port: number }).port}`;
  system = await startTestSystem([
    { prefixes: ['/api/profile'], adapters: { store: profileStore, bus }, create: (deps) => createProfileService(deps) },
    {
      prefixes: ['/api/data'],
      publicPrefixes: ['/api/data/export/public'],
      adapters: { store: workerStore, bus },
      create: (deps) =>
        createExportWorker({
          ...deps,
          storage: new FileExportStorage(join(dataDir, 'exports')),
          sources: () => ({ history: sourcesUrl, playlist: sourcesUrl, preference: sourcesUrl, profile: deps.serviceUrls['/api/profile'] }),
          callbackSecret: 's'.repeat(32),
          erasureParticipants: ['profile-svc', 'export-worker'],
          buildRetryDelayMs: 1,
        }),
    },
  ]);
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await system.stop();
  await new Promise((r) => sources.close(r));
  rmSync(dataDir, { recursive: true, force: true });
});

describe('given an export being built', () => {
  it('when the user is erased, then the export is cancelled, no profile comes back, and no file holds the user id', async () => {
    const user = distinctiveUserId('exporting');
    const profileRevision = async () => (await profileStore.readStream(profileStreamId(user))).revision;
    await given(async () => {
      const client = await userClient(system, user);
      expect((await client.put('/api/profile/v3', { displayName: 'Before' })).status).toBe(200);
      const exported = await client.post('/api/data/export', {});
      expect(exported.status).toBe(201);
      await waitUntil(() => held.length === 1, 10_000, 'the export reading the history');
      return client;
    })
      .when(async (client) => {
        const erased = await client.delete('/api/data');
        // The history answers now: an export still running would go on to read the profile.
        for (const res of held) if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[],"total":0}');
        await waitUntil(
          async () => abortedReads > 0 || (await profileRevision()) >= 0,
          10_000,
          'the export cancelled, or a profile created',
        );
        return erased;
      })
      .then(async (erased, client) => {
        expect(erased.status).toBe(204);
        expect(abortedReads).toBe(1);
        expect(await profileRevision()).toBe(-1);
        expect((await workerStore.readStream(exportStreamId(user))).revision).toBe(-1);
        expect((await client.get('/api/data/export')).body).toEqual([]);
        expect(readdirSync(join(dataDir, 'exports'))).toEqual([]);
        expect(bytesFoundUnder(dataDir, [user])).toEqual([]);
        // The user's own new request is the one thing that creates data again.
        expect((await client.get('/api/profile/v3')).body.displayName).toBeNull();
      });
  });
});
