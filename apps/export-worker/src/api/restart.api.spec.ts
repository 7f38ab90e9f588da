import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus } from '@udp/bus';
import { type EventStore, MemoryEventStore } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { given, waitUntil } from '@udp/test-kit';
import { createExportWorker } from '../app';
import { exportStreamId } from '../domain/aggregate';
import { FileExportStorage } from '../worker/storage';
import type { ExportArea } from '../worker/zip';

/**
 * Embedded mode after a restart: the in-process bus has forgotten the request of an export that was being built,
 * and the outbox remembers having published it. The new process requests it again and finishes it; the old
 * attempt, when it ends after all, loses and removes its file: one zip.
 */
const dir = mkdtempSync(join(tmpdir(), 'udp-export-restart-'));
const store = new MemoryEventStore();
// The outbox checkpoint outlives the process (a file in DATA_DIR in embedded mode).
const publisherCheckpoints = new MemoryReadModelStore().checkpoints();
let release!: () => void;
const stuck = new Promise<void>((r) => (release = r));
const data = (wait?: Promise<void>): ExportArea[] => [
  {
    file: 'profile.json',
    kind: 'value',
    value: async () => {
      await wait;
      return { displayName: 'Ola' };
    },
  },
];
const handle = (): EventStore => ({
  readStream: (id, options) => store.readStream(id, options),
  appendToStream: (id, events, options) => store.appendToStream(id, events, options),
  deleteStream: (id) => store.deleteStream(id),
  listStreams: (prefix) => store.listStreams(prefix),
  subscribe: (options, handler) => store.subscribe(options, handler),
  ping: () => store.ping(),
  close: async () => undefined,
});
const instance = (areas: () => ExportArea[], redrive: boolean) =>
  startTestSystem([
    {
      prefixes: ['/api/data'],
      publicPrefixes: ['/api/data/export/public'],
      // Each process closes its own handle on the store, not the store both share.
      adapters: { store: handle(), bus: new InProcessBus(5) },
      create: (deps) =>
        createExportWorker({
          ...deps,
          storage: new FileExportStorage(dir),
          sources: { history: '', playlist: '', preference: '', profile: '' },
          areas,
          publisherCheckpoints,
          callbackSecret: 's'.repeat(32),
          redrivePendingOnStart: redrive,
          buildRetryDelayMs: 1,
        }),
    },
  ]);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('finishes an export whose request the in-process bus lost in a restart, leaving one zip', async () => {
  let first!: TestSystem;
  let second!: TestSystem;
  await given(async () => {
    // A first process building the export, its attempt stuck.
    first = await instance(() => data(stuck), false);
    const auth = await first.auth('ola');
    const key = (await first.http.post('/api/data/export').set('authorization', auth).send({})).body.key as string;
    await waitUntil(async () => (await store.readStream(exportStreamId('ola'))).events.some((e) => e.type === 'ExportAttemptStarted'));
    return key;
  })
    .when(async () => {
      // "Restarted": a new process on the same store, with a new (empty) in-process bus.
      second = await instance(() => data(), true);
    })
    .then(async (_, key) => {
      await waitUntil(
        async () => (await second.http.get('/api/data/export').set('authorization', await second.auth('ola'))).body[0]?.status === 'ready',
      );
      expect((await second.http.get(`/api/data/export/public/${key}`)).status).toBe(200);
    });

  await given(() => undefined)
    .when(async () => {
      release(); // the first attempt ends after all, and loses
      await first.stop(); // waits for its attempt to end
    })
    .then(() => {
      expect(readdirSync(dir)).toHaveLength(1);
      expect(readdirSync(dir)[0]).toMatch(/\.zip$/);
    });
  await second.stop();
  await store.close();
});
