import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus, type ReceivedMessage } from '@udp/bus';
import { erasureEvents, exportEvents } from '@udp/contracts';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { given, waitUntil } from '@udp/test-kit';
import { createExportWorker, type ExportWorker } from '../app';
import { binary, unzip } from '@udp/test-kit';
import { parseAllowedHosts } from '../worker/callback';
import { exportStreamId } from '../domain/aggregate';
import { FileExportStorage } from '../worker/storage';
import type { ExportArea } from '../worker/zip';

/**
 * The export-worker behind the real gateway, on memory adapters and a shared in-process bus. The user's data
 * comes from an in-test source (the full flow through the real services is tools/embedded/export.api.spec.ts).
 */
const dir = mkdtempSync(join(tmpdir(), 'udp-export-api-'));
const secret = 'c'.repeat(40);
const DAY = 86_400_000;
let clock = 1_700_000_000_000;
let system: TestSystem;
let worker: ExportWorker;
let bus: InProcessBus;
let receiver: Server;
let receiverPort: number;
const received: Array<{ body: string; signature: string }> = [];
const messages: ReceivedMessage[] = [];
let failSources = false;
/** The history source fails after its first page (a service going away in the middle of an export). */
let failHalfWay = false;

/** A user's data: 2,500 history entries (three pages), one playlist, two preferences, a profile. */
const historyOf = (userId: string) =>
  Array.from({ length: 2500 }, (_, i) => ({ date: 1000 + i, deleted: i % 10 === 0, id: i + 1, item_id: `urn:${userId}:${i}` }));
const areas = (userId: string): ExportArea[] => {
  if (failSources) throw new Error('sources down');
  return [
    {
      file: 'history.json',
      kind: 'array',
      items: (async function* () {
        const all = historyOf(userId);
        for (let i = 0; i < all.length; i += 1000) {
          if (failHalfWay && i > 0) throw new Error('history went away');
          yield all.slice(i, i + 1000);
        }
      })(),
    },
    {
      file: 'playlists.json',
      kind: 'array',
      items: (async function* () {
        yield [{ businessId: 'watch_later', bookmarks: [] }];
      })(),
    },
    {
      file: 'preferences.json',
      kind: 'object',
      entries: (async function* () {
        yield [['ui', { theme: 'dark' }]];
        yield [['a/b', { x: [1] }]];
      })(),
    },
    { file: 'profile.json', kind: 'value', value: async () => ({ displayName: userId }) },
  ];
};

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ body, signature: String(req.headers['x-signature']) });
      res.writeHead(req.url === '/redirect' ? 302 : 204, req.url === '/redirect' ? { location: 'http://127.0.0.1:1/' } : {}).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverPort = (receiver.address() as { port: number }).port;
  bus = new InProcessBus(5);
  for (const topic of Object.values(exportEvents.EXPORT_TOPICS))
    await bus.subscribe(topic, 'test-observer', async (m) => void messages.push(m));
  system = await startTestSystem([
    {
      prefixes: ['/api/data'],
      publicPrefixes: ['/api/data/export/public'],
      adapters: { bus },
      create: async (deps) => {
        worker = await createExportWorker({
          ...deps,
          storage: new FileExportStorage(join(dir, 'exports')),
          sources: { history: '', playlist: '', preference: '', profile: '' },
          areas,
          now: () => clock,
          publicBaseUrl: 'https://udp.example',
          callbackHosts: parseAllowedHosts(`http://127.0.0.1:${receiverPort}, partner.example`),
          callbackSecret: secret,
          callbackAttempts: 3,
          callbackRetryMs: 5,
          buildRetryDelayMs: 1,
          maxLiveExports: 4,
          erasureParticipants: ['export-worker', 'history-svc'],
          erasureTimeoutMs: 300,
        });
        return worker;
      },
    },
  ]);
});
afterAll(async () => {
  await system.stop();
  await new Promise((r) => receiver.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const zipFiles = () => readdirSync(join(dir, 'exports')).filter((n) => n.endsWith('.zip'));
async function exportReady(auth: string, key: string) {
  await waitUntil(
    async () =>
      (await system.http.get('/api/data/export').set('authorization', auth)).body.some(
        (s: { key: string; status: string }) => s.key === key && s.status !== 'pending',
      ),
    10_000,
    'export finished',
  );
  return (await system.http.get('/api/data/export').set('authorization', auth)).body.find((s: { key: string }) => s.key === key);
}
const download = (path: string, auth?: string) => {
  const req = system.http
    .get(path)
    .buffer(true)
    .parse(binary as never);
  return auth ? req.set('authorization', auth) : req;
};

const requestExport = (auth: string, body: object = {}) => system.http.post('/api/data/export').set('authorization', auth).send(body);
const listExports = (auth: string) => system.http.get('/api/data/export').set('authorization', auth);
const nothing = () => undefined;

describe('POST /api/data/export', () => {
  it('answers 201 pending, builds the zip, calls back signed, and serves it at url and publicUrl', async () => {
    const auth = await system.auth('ann');
    await given(nothing)
      .when(() => requestExport(auth, { callbackUrl: `http://127.0.0.1:${receiverPort}/hook`, fileName: '../../etc/My "Export"\u0007' }))
      .then(async (res) => {
        expect(res.status).toBe(201);
        const key = res.body.key as string;
        expect(key).toMatch(/^[A-Za-z0-9_-]{22}$/);
        expect(res.body).toMatchObject({
          status: 'pending',
          createdOn: clock,
          expiresAt: clock + 7 * DAY,
          fileName: 'My Export.zip',
          url: `https://udp.example/api/data/export/${key}`,
          publicUrl: `https://udp.example/api/data/export/public/${key}`,
        });

        const ready = await exportReady(auth, key);
        expect(ready).toMatchObject({ status: 'ready', size: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
        await worker.drain();
        const callback = received.find((r) => JSON.parse(r.body).key === key)!;
        expect(callback.signature).toBe(`sha256=${createHmac('sha256', secret).update(callback.body).digest('hex')}`);
        expect(JSON.parse(callback.body)).toMatchObject({ key, status: 'ready', size: ready.size, sha256: ready.sha256 });
        expect((await listExports(auth)).body[0].callback).toEqual({ status: 'delivered', attempts: 1 });

        const pub = await download(`/api/data/export/public/${key}`);
        expect(pub.status).toBe(200);
        expect(pub.headers['content-type']).toBe('application/zip');
        expect(pub.headers['content-disposition']).toBe('attachment; filename="My Export.zip"');
        expect(createHash('sha256').update(pub.body).digest('hex')).toBe(ready.sha256);
        const own = await download(`/api/data/export/${key}`, auth);
        expect(Buffer.compare(own.body, pub.body)).toBe(0);

        const files = await unzip(pub.body);
        expect([...files.keys()].sort()).toEqual(['history.json', 'manifest.json', 'playlists.json', 'preferences.json', 'profile.json']);
        expect(JSON.parse(files.get('history.json')!.toString())).toEqual(historyOf('ann'));
        expect(JSON.parse(files.get('preferences.json')!.toString())).toEqual({ ui: { theme: 'dark' }, 'a/b': { x: [1] } });
        const manifest = JSON.parse(files.get('manifest.json')!.toString());
        expect(manifest).toMatchObject({ formatVersion: 1, createdAt: clock, userId: 'ann' });
        for (const name of ['history.json', 'playlists.json', 'preferences.json', 'profile.json']) {
          expect(manifest.files[name].sha256).toBe(createHash('sha256').update(files.get(name)!).digest('hex'));
        }
        expect([
          manifest.files['history.json'].count,
          manifest.files['preferences.json'].count,
          manifest.files['profile.json'].count,
        ]).toEqual([2500, 2, 1]);

        await waitUntil(() => messages.some((m) => m.topic === exportEvents.EXPORT_TOPICS.completed && m.value.key === key));
        const completed = messages.find((m) => m.topic === exportEvents.EXPORT_TOPICS.completed && m.value.key === key)!;
        expect(completed.key).toBe('ann');
        expect(completed.value).toMatchObject({
          userId: 'ann',
          size: ready.size,
          sha256: ready.sha256,
          publicUrl: ready.publicUrl,
          expiresAt: ready.expiresAt,
        });
      });
  });

  it('makes no second zip and no second completed message when the request is delivered again', async () => {
    const auth = await system.auth('bea');
    await given(async () => {
      const key = (await requestExport(auth)).body.key;
      await exportReady(auth, key);
      const request = messages.find((m) => m.topic === exportEvents.EXPORT_TOPICS.requested && m.value.key === key)!;
      expect(request.value).toMatchObject({ userId: 'bea', fileName: 'user-data-export-2023-11-14.zip' });
      return { key, request, before: zipFiles().length };
    })
      .when(({ request }) =>
        bus.publish(exportEvents.EXPORT_TOPICS.requested, [
          { key: request.key, value: request.value },
          { key: request.key, value: request.value },
        ]),
      )
      .then(async (_, { key, before }) => {
        // A marker published after the duplicates: once it is handled, so are they.
        const marker = (await requestExport(auth)).body.key;
        await exportReady(auth, marker);
        expect(zipFiles().length).toBe(before + 1);
        await waitUntil(() => messages.some((m) => m.topic === exportEvents.EXPORT_TOPICS.completed && m.value.key === marker));
        expect(messages.filter((m) => m.topic === exportEvents.EXPORT_TOPICS.completed && m.value.key === key)).toHaveLength(1);
      });
  });

  it('refuses a bad fileName or a refused callbackUrl with 400 naming the field', async () => {
    const auth = await system.auth('cid');
    /** No export of cid's: what every refused request must leave. */
    const noExports = async () => expect((await listExports(auth)).body).toEqual([]);
    await given(noExports)
      .when(() => requestExport(auth, { fileName: '/..//\u0001' }))
      .then(async (name) => {
        expect([name.status, name.body.errors]).toEqual([400, [{ field: 'fileName', message: expect.any(String) }]]);
        await noExports();
      });
    for (const callbackUrl of [
      'http://127.0.0.1:1/hook', // unlisted port
      'https://127.0.0.1/hook', // loopback, not listed
      'https://evil.example/hook', // unlisted host
      'ftp://partner.example/x', // not http
      'http://partner.example/hook', // listed for https only
      'https://partner.example:8443/x', // listed without that port
      'not a url',
    ]) {
      await given(noExports)
        .when(() => requestExport(auth, { callbackUrl }))
        .then(async (res) => {
          expect([callbackUrl, res.status, res.body.errors?.[0]?.field]).toEqual([callbackUrl, 400, 'callbackUrl']);
          await noExports();
        });
    }
    await given(noExports)
      .when(() => requestExport(auth, { callbackUrl: 5 }))
      .then(async (wrongType) => {
        expect([wrongType.status, wrongType.body.errors[0].field]).toEqual([400, 'callbackUrl']);
        await noExports();
      });
  });

  it('records a failed callback on the status and still serves the download', async () => {
    const auth = await system.auth('dan');
    await given(nothing)
      .when(() => requestExport(auth, { callbackUrl: `http://127.0.0.1:${receiverPort}/redirect` }))
      .then(async (res) => {
        const key = res.body.key;
        await exportReady(auth, key);
        await worker.drain();
        const status = (await listExports(auth)).body[0];
        expect(status).toMatchObject({
          status: 'ready',
          callback: { status: 'failed', attempts: 3, error: expect.stringMatching(/redirect/) },
        });
        expect((await download(`/api/data/export/public/${key}`)).status).toBe(200);
      });
  });

  it('records a failure with its reason when the data cannot be gathered', async () => {
    const auth = await system.auth('eve');
    try {
      await given(() => {
        failSources = true;
      })
        .when(() => requestExport(auth))
        .then(async (res) => {
          const key = res.body.key;
          const status = await exportReady(auth, key);
          expect(status).toMatchObject({ status: 'failed', reason: 'the export could not be built' });
          await waitUntil(() => messages.some((m) => m.topic === exportEvents.EXPORT_TOPICS.failed && m.value.key === key));
          expect((await download(`/api/data/export/public/${key}`)).status).toBe(404);
        });
    } finally {
      failSources = false;
    }
  });

  it('records a failure when a source fails half-way, and leaves no object behind', async () => {
    const auth = await system.auth('eli');
    try {
      await given(() => {
        const before = readdirSync(join(dir, 'exports')).length;
        failHalfWay = true;
        return before;
      })
        .when(() => requestExport(auth))
        .then(async (res, before) => {
          expect(await exportReady(auth, res.body.key)).toMatchObject({ status: 'failed', reason: 'the export could not be built' });
          expect(readdirSync(join(dir, 'exports'))).toHaveLength(before);
        });
    } finally {
      failHalfWay = false;
    }
  });

  it('limits the exports a user keeps at a time', async () => {
    const auth = await system.auth('fay');
    await given(async () => {
      for (let i = 0; i < 4; i++) expect((await requestExport(auth)).status).toBe(201);
    })
      .when(() => requestExport(auth))
      .then((fifth) => expect(fifth.status).toBe(400));
    await given(nothing)
      .when(() => system.http.delete('/api/data/export').set('authorization', auth))
      .then((res) => expect(res.status).toBe(204));
  });
});

describe('an interrupted callback', () => {
  it('is resumed by the sweep when an instance completed an export and stopped before calling back', async () => {
    const key = 'k'.repeat(22);
    const auth = await system.auth('nia');
    const sweepAndDrain = async () => {
      await worker.sweep();
      await worker.drain();
    };
    const callbacksOf = () => received.filter((r) => JSON.parse(r.body).key === key);

    await given(async () => {
      // What an instance killed right after the completion leaves in the store (owned by the user, as every write).
      const store = system.deps[0].store;
      const metadata = { owner: { userId: 'nia' } };
      const callbackUrl = `http://127.0.0.1:${receiverPort}/resumed`;
      await store.appendToStream(
        exportStreamId('nia'),
        [
          {
            id: crypto.randomUUID(),
            type: 'ExportRequested',
            data: { key, fileName: 'f.zip', callbackUrl, requestedAt: clock, expiresAt: clock + DAY },
            metadata,
          },
          { id: crypto.randomUUID(), type: 'ExportAttemptStarted', data: { key, storageId: 'a'.repeat(24), startedAt: clock }, metadata },
          {
            id: crypto.randomUUID(),
            type: 'ExportCompleted',
            data: { key, storageId: 'a'.repeat(24), size: 10, sha256: 'b'.repeat(64), expiresAt: clock + DAY, completedAt: clock },
            metadata,
          },
        ],
        { expectedRevision: 'no_stream' },
      );
      await waitUntil(async () => (await listExports(auth)).body[0]?.status === 'ready');
    })
      .when(sweepAndDrain)
      .then(() => expect(received.some((r) => JSON.parse(r.body).key === key)).toBe(false)); // still within the retry window

    await given(() => {
      clock += 11 * 60_000;
    })
      .when(sweepAndDrain)
      .then(async () => {
        expect(callbacksOf()).toHaveLength(1);
        expect((await listExports(auth)).body[0].callback).toEqual({ status: 'delivered', attempts: 1 });
      });

    await given(nothing)
      .when(sweepAndDrain)
      .then(() => expect(callbacksOf()).toHaveLength(1));
  });
});

describe('listing and deleting', () => {
  it("lists the caller's exports newest first; another user sees none and gets 404 for them", async () => {
    const auth = await system.auth('gus');
    const other = await system.auth('hal');
    /** Gus's exports, one, then two a second later, both ready. */
    let first = '';
    let second = '';
    await given(async () => {
      first = (await requestExport(auth, { fileName: 'one' })).body.key;
      clock += 1000;
      second = (await requestExport(auth, { fileName: 'two' })).body.key;
      await exportReady(auth, first);
      await exportReady(auth, second);
    })
      .when(() => listExports(auth))
      .then((list) => expect(list.body.map((s: { key: string }) => s.key)).toEqual([second, first]));

    await given(nothing)
      .when(() => listExports(other))
      .then((res) => expect(res.body).toEqual([]));
    for (const [request, status] of [
      [() => download(`/api/data/export/${first}`, other), 404],
      [() => system.http.delete(`/api/data/export/${first}`).set('authorization', other), 404],
      [() => download(`/api/data/export/${first}`), 401],
      // The public prefix opens downloads only: any other method there is refused (405, before credentials are looked at).
      [() => system.http.delete(`/api/data/export/public/${first}`), 405],
      [() => system.http.post('/api/data/export/public/x').send({}), 405],
    ] as const) {
      await given(nothing)
        .when(request)
        .then((res) => expect(res.status).toBe(status));
    }
  });

  it('deletes one export and its file, then all of them; their addresses answer 404', async () => {
    const auth = await system.auth('ida');
    /** Ida's three exports, all ready. */
    const keys: string[] = [];
    let files = 0;
    await given(async () => {
      for (let i = 0; i < 3; i++) keys.push((await requestExport(auth)).body.key);
      for (const key of keys) await exportReady(auth, key);
      files = zipFiles().length;
    })
      .when(() => system.http.delete(`/api/data/export/${keys[0]}`).set('authorization', auth))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(zipFiles().length).toBe(files - 1);
        expect((await download(`/api/data/export/public/${keys[0]}`)).status).toBe(404);
        expect((await system.http.delete(`/api/data/export/${keys[0]}`).set('authorization', auth)).status).toBe(404);
        expect((await listExports(auth)).body.map((s: { key: string }) => s.key).sort()).toEqual(keys.slice(1).sort());
      });

    await given(nothing)
      .when(() => system.http.delete('/api/data/export').set('authorization', auth))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(zipFiles().length).toBe(files - 3);
        expect((await listExports(auth)).body).toEqual([]);
        for (const key of keys) expect((await download(`/api/data/export/public/${key}`)).status).toBe(404);
        expect((await download('/api/data/export/public/not-a-key')).status).toBe(404);
      });
  });

  it('expires an export after the TTL: 404 at once, and the sweep removes its file', async () => {
    const auth = await system.auth('jon');
    /** Jon's export, ready. */
    let key = '';
    let files = 0;
    await given(async () => {
      key = (await requestExport(auth)).body.key;
      await exportReady(auth, key);
      files = zipFiles().length;
      clock += 7 * DAY - 1;
    })
      .when(() => download(`/api/data/export/public/${key}`))
      .then((res) => expect(res.status).toBe(200));

    await given(() => {
      clock += 1;
    })
      .when(() => download(`/api/data/export/public/${key}`))
      .then(async (res) => {
        expect(res.status).toBe(404);
        expect((await download(`/api/data/export/${key}`, auth)).status).toBe(404);
        expect((await listExports(auth)).body).toEqual([]);
      });

    await given(nothing)
      .when(() => worker.sweep())
      .then((removed) => {
        expect(removed).toBeGreaterThanOrEqual(1);
        expect(zipFiles().length).toBeLessThan(files);
      });
  });
});
describe('DELETE /api/data (erasure coordinator)', () => {
  const { ERASURE_TOPICS } = erasureEvents;
  const completions: ReceivedMessage[] = [];
  const requests: erasureEvents.ErasureRequestedMessage[] = [];
  const confirmations: erasureEvents.ErasureConfirmedMessage[] = [];
  let historyAnswers = true;
  beforeAll(async () => {
    await bus.subscribe(ERASURE_TOPICS.completed, 'test-observer', async (m) => void completions.push(m));
    await bus.subscribe(
      ERASURE_TOPICS.requested,
      'test-observer',
      async (m) => void requests.push(m.value as erasureEvents.ErasureRequestedMessage),
    );
    await bus.subscribe(
      ERASURE_TOPICS.confirmed,
      'test-observer',
      async (m) => void confirmations.push(m.value as erasureEvents.ErasureConfirmedMessage),
    );
    // A stand-in for history-svc's participant (built by its own service): confirms when told to.
    await bus.subscribe(ERASURE_TOPICS.requested, 'history-svc-erasure', async (m) => {
      if (!historyAnswers) return;
      const { erasureId, userId } = m.value as erasureEvents.ErasureRequestedMessage;
      const value: erasureEvents.ErasureConfirmedMessage = {
        erasureId,
        userId,
        service: 'history-svc',
        streamsDeleted: 1,
        documentsDeleted: 3,
        confirmedAt: clock,
      };
      await bus.publish(ERASURE_TOPICS.confirmed, [{ key: userId, value }]);
    });
  });

  it('answers 204 once every participant confirmed; the exports and their files are gone; completed is published', async () => {
    const auth = await system.auth('kim');
    await given(async () => {
      const key = (await requestExport(auth)).body.key;
      await exportReady(auth, key);
      return { key, files: zipFiles().length };
    })
      .when(() => system.http.delete('/api/data').set('authorization', auth))
      .then(async (res, { key, files }) => {
        expect(res.status).toBe(204);
        expect(zipFiles().length).toBe(files - 1);
        expect((await listExports(auth)).body).toEqual([]);
        expect((await download(`/api/data/export/public/${key}`)).status).toBe(404);
        await waitUntil(() => completions.some((m) => m.key === 'kim'));
        expect(completions.find((m) => m.key === 'kim')!.value).toMatchObject({
          userId: 'kim',
          services: ['export-worker', 'history-svc'],
        });
        // A new export starts from nothing.
        expect((await requestExport(auth)).status).toBe(201);
      });
  });

  it('answers 202 with a status address when a participant is slow, and completes when it confirms', async () => {
    const auth = await system.auth('lea');
    /** The pending erasure's id and status address. */
    let erasure = { erasureId: '', location: '' };
    await given(() => {
      historyAnswers = false;
    })
      .when(() => system.http.delete('/api/data').set('authorization', auth))
      .then(async (res) => {
        historyAnswers = true;
        expect(res.status).toBe(202);
        expect(res.headers.location).toBe(`/api/data/erasure/${res.body.erasureId}`);
        expect(res.body).toMatchObject({ status: 'pending', participants: ['export-worker', 'history-svc'], confirmed: ['export-worker'] });
        expect((await system.http.get(res.headers.location).set('authorization', await system.auth('max'))).status).toBe(404);
        erasure = { erasureId: res.body.erasureId, location: res.headers.location };
      });

    await given(nothing)
      .when(() => {
        const value: erasureEvents.ErasureConfirmedMessage = {
          erasureId: erasure.erasureId,
          userId: 'lea',
          service: 'history-svc',
          streamsDeleted: 0,
          documentsDeleted: 0,
          confirmedAt: clock,
        };
        return bus.publish(ERASURE_TOPICS.confirmed, [
          { key: 'lea', value },
          { key: 'lea', value },
        ]);
      })
      .then(async () => {
        await waitUntil(async () => (await system.http.get(erasure.location).set('authorization', auth)).body.status === 'completed');
        expect((await system.http.get(erasure.location).set('authorization', auth)).body).toMatchObject({
          confirmed: ['export-worker', 'history-svc'],
          completedAt: clock,
        });
        await waitUntil(() => completions.some((m) => m.key === 'lea'));
        expect(completions.filter((m) => m.key === 'lea')).toHaveLength(1);
      });
  });

  it('a request delivered again after the erasure confirms again and leaves the exports the user made since', async () => {
    const auth = await system.auth('ned');
    await given(async () => {
      expect((await system.http.delete('/api/data').set('authorization', auth)).status).toBe(204);
      const request = requests.find((r) => r.userId === 'ned')!;
      const key = (await requestExport(auth)).body.key;
      expect((await exportReady(auth, key)).status).toBe('ready');
      return { request, key };
    })
      .when(({ request }) => bus.publish(ERASURE_TOPICS.requested, [{ key: 'ned', value: request }]))
      .then(async (_, { request, key }) => {
        const fromWorker = () => confirmations.filter((c) => c.erasureId === request.erasureId && c.service === 'export-worker');
        await waitUntil(() => fromWorker().length === 2, 5000, 'the export-worker confirms the redelivered request');
        expect(fromWorker()[1]).toMatchObject({
          streamsDeleted: fromWorker()[0].streamsDeleted,
          documentsDeleted: fromWorker()[0].documentsDeleted,
        });
        expect((await listExports(auth)).body.map((s: { key: string }) => s.key)).toEqual([key]);
        expect((await download(`/api/data/export/public/${key}`)).status).toBe(200);
      });
  });

  it('requests a pending erasure again, of the participants that have not confirmed only, until it completes', async () => {
    const auth = await system.auth('ola');
    /** The pending erasure's id and status address. */
    let erasure = { erasureId: '', location: '' };
    await given(() => {
      historyAnswers = false;
    })
      .when(() => system.http.delete('/api/data').set('authorization', auth))
      .then((res) => {
        expect([res.status, res.body.confirmed]).toEqual([202, ['export-worker']]);
        historyAnswers = true;
        erasure = { erasureId: res.body.erasureId, location: res.headers.location };
      });

    // Pending for less than a minute: not yet requested again.
    await given(nothing)
      .when(() => worker.resumeErasures(60_000))
      .then((resumed) => expect(resumed).toBe(0));

    await given(nothing)
      .when(() => worker.resumeErasures())
      .then(async (resumed) => {
        expect(resumed).toBe(1);
        await waitUntil(async () => (await system.http.get(erasure.location).set('authorization', auth)).body.status === 'completed');
        const again = requests.filter((r) => r.erasureId === erasure.erasureId);
        expect(again.map((r) => r.participants)).toEqual([undefined, ['history-svc']]);
        expect(confirmations.filter((c) => c.erasureId === erasure.erasureId).map((c) => c.service)).toEqual([
          'export-worker',
          'history-svc',
        ]);
      });

    await given(nothing)
      .when(() => worker.resumeErasures())
      .then((resumed) => expect(resumed).toBe(0));
  });
});
