import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { SqliteEventStore } from '@udp/eventstore';
import { given } from '@udp/test-kit';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createPreferenceService } from '../app';
import { preferenceStreamId } from '../domain/aggregate';

const P = '/api/preference';
const service = (store?: SqliteEventStore) => ({
  prefixes: [P],
  create: (deps: Parameters<typeof createPreferenceService>[0]) => createPreferenceService(deps),
  ...(store && { adapters: { store } }),
});
const send = (system: TestSystem, method: 'put' | 'post', auth: string, path: string, body: unknown) =>
  system.http[method](path).set('authorization', auth).set('content-type', 'application/json').send(JSON.stringify(body));

/** A pair a name of user and key joined by `-` with the key base64url-encoded would give one stream (`preference-u-YWI-c2V0dGluZ3M`). */
const U = { user: 'u', key: 'ab>settings' };
const V = { user: 'u-YWI', key: 'settings' };

describe('preference streams of different users never meet', () => {
  let system: TestSystem;
  beforeEach(async () => {
    system = await startTestSystem([service()]);
  });
  afterEach(() => system.stop());

  it('the pair has two streams', () => {
    expect(preferenceStreamId(U.user, U.key)).not.toBe(preferenceStreamId(V.user, V.key));
  });

  it('user u with key "ab>settings" and user u-YWI with key "settings" keep their own documents', async () => {
    const u = await system.auth(U.user);
    const v = await system.auth(V.user);
    const read = (auth: string, path: string) => system.http.get(path).set('authorization', auth);

    // Given u's document, v's first write creates v's document: it neither sees nor keeps u's.
    await given(async () =>
      expect((await send(system, 'put', u, `${P}/${encodeURIComponent(U.key)}`, { secret: 'of u' })).status).toBe(201),
    )
      .when(() => send(system, 'post', v, `${P}/${V.key}/prefs`, { payload: { theme: 'dark' } }))
      .then(async (created) => {
        expect(created.status).toBe(201);
        expect((await read(v, `${P}/${V.key}`)).body).toEqual({ prefs: { theme: 'dark' } });
        expect((await read(v, P)).body).toEqual([V.key]);
      });

    // v deleting its document leaves u's alone, and u's never showed v's change.
    await given(() => undefined)
      .when(() => system.http.delete(`${P}/${V.key}`).set('authorization', v))
      .then(async (deleted) => {
        expect(deleted.status).toBe(204);
        expect((await read(u, `${P}/${encodeURIComponent(U.key)}`)).body).toEqual({ secret: 'of u' });
        expect((await read(u, P)).body).toEqual([U.key]);
        expect((await read(v, `${P}/${V.key}`)).status).toBe(404);
      });
  });
});

describe('a preference stream holding an event of someone else', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pref-foreign-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const written = (key: string, document: Record<string, unknown>) => ({
    id: randomUUID(),
    type: 'PreferenceWritten',
    data: { key, document, operation: { kind: 'replace' } },
  });

  it("refuses a stream that holds another owner's event instead of answering with it", async () => {
    const store = new SqliteEventStore(join(dir, 'preference.sqlite'));
    const system = await startTestSystem([service(store)]);
    try {
      const v = await system.auth(V.user);
      // Given an event of u placed in v's stream (as a bug or a hand-edited store would), v must not get u's document.
      await given(() =>
        store.appendToStream(
          preferenceStreamId(V.user, V.key),
          [{ ...written(V.key, { secret: 'of u' }), metadata: { owner: { userId: U.user, key: V.key } } }],
          { expectedRevision: 'no_stream' },
        ),
      )
        .when(() => send(system, 'post', v, `${P}/${V.key}/x`, { payload: { y: 1 } }))
        .then((answer) => {
          expect(answer.status).toBe(500);
          expect(JSON.stringify(answer.body)).not.toContain('of u');
        });
    } finally {
      await system.stop();
    }
  });
});
