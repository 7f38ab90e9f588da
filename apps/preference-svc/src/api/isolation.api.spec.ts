import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { SqliteEventStore } from '@udp/eventstore';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createPreferenceService } from '../app';
import { legacyPreferenceStreamId, preferenceStreamId } from '../domain/events';

const P = '/api/preference';
const service = (store?: SqliteEventStore) => ({
  prefixes: [P],
  create: (deps: Parameters<typeof createPreferenceService>[0]) => createPreferenceService(deps),
  ...(store && { adapters: { store } }),
});
const send = (system: TestSystem, method: 'put' | 'post', auth: string, path: string, body: unknown) =>
  system.http[method](path).set('authorization', auth).set('content-type', 'application/json').send(JSON.stringify(body));

/** The pair of the issue: under the former names both wrote to `preference-u-YWI-c2V0dGluZ3M`. */
const U = { user: 'u', key: 'ab>settings' };
const V = { user: 'u-YWI', key: 'settings' };

describe('preference streams of different users never meet', () => {
  let system: TestSystem;
  beforeEach(async () => {
    system = await startTestSystem([service()]);
  });
  afterEach(() => system.stop());

  it('the former names of the pair were one stream; the new ones are two', () => {
    expect(legacyPreferenceStreamId(U.user, U.key)).toBe(legacyPreferenceStreamId(V.user, V.key));
    expect(preferenceStreamId(U.user, U.key)).not.toBe(preferenceStreamId(V.user, V.key));
  });

  it('user u with key "ab>settings" and user u-YWI with key "settings" keep their own documents', async () => {
    const u = await system.auth(U.user);
    const v = await system.auth(V.user);
    expect((await send(system, 'put', u, `${P}/${encodeURIComponent(U.key)}`, { secret: 'of u' })).status).toBe(201);

    // v's first write creates v's document: it neither sees nor keeps u's.
    const created = await send(system, 'post', v, `${P}/${V.key}/prefs`, { payload: { theme: 'dark' } });
    expect(created.status).toBe(201);
    const vDocument = await system.http.get(`${P}/${V.key}`).set('authorization', v);
    expect(vDocument.body).toEqual({ prefs: { theme: 'dark' } });
    expect((await system.http.get(P).set('authorization', v)).body).toEqual([V.key]);

    // v deleting its document leaves u's alone, and u's never showed v's change.
    expect((await system.http.delete(`${P}/${V.key}`).set('authorization', v)).status).toBe(204);
    expect((await system.http.get(`${P}/${encodeURIComponent(U.key)}`).set('authorization', u)).body).toEqual({ secret: 'of u' });
    expect((await system.http.get(P).set('authorization', u)).body).toEqual([U.key]);
    expect((await system.http.get(`${P}/${V.key}`).set('authorization', v)).status).toBe(404);
  });
});

describe('preference data written under the former stream names', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pref-legacy-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const written = (key: string, document: Record<string, unknown>) => ({
    id: randomUUID(),
    type: 'PreferenceWritten',
    data: { key, document, operation: { kind: 'replace' } },
  });

  it('stays readable, each event with the user who wrote it, also from a stream two users shared', async () => {
    const file = join(dir, 'preference.sqlite');
    const old = new SqliteEventStore(file);
    // As the former version wrote them: u, then u-YWI writing into the same stream (its write folded u's document).
    const shared = legacyPreferenceStreamId(U.user, U.key);
    await old.appendToStream(shared, [written(U.key, { secret: 'of u' })], { expectedRevision: 'no_stream' });
    await old.appendToStream(shared, [written(V.key, { secret: 'of u', theme: 'dark' })], { expectedRevision: 0 });
    await old.appendToStream(shared, [written(U.key, { secret: 'of u, later' })], { expectedRevision: 1 });
    await old.appendToStream(legacyPreferenceStreamId('alice', 'player'), [written('player', { volume: 3 })], {
      expectedRevision: 'no_stream',
    });
    await old.close();

    for (let start = 1; start <= 2; start++) {
      const store = new SqliteEventStore(file);
      const system = await startTestSystem([service(store)]);
      try {
        const as = async (user: string) => system.auth(user);
        const read = async (user: string, key: string) =>
          (await system.http.get(`${P}/${encodeURIComponent(key)}`).set('authorization', await as(user))).body;
        expect(await read(U.user, U.key)).toEqual({ secret: 'of u, later' });
        // What u-YWI wrote is its own (the former version had folded u's document into it: kept as written).
        expect(await read(V.user, V.key)).toEqual(start === 1 ? { secret: 'of u', theme: 'dark' } : { theme: 'light' });
        expect(await read('alice', 'player')).toEqual({ volume: 3 });
        expect((await system.http.get(P).set('authorization', await as(U.user))).body).toEqual([U.key]);
        expect((await system.http.get(P).set('authorization', await as(V.user))).body).toEqual([V.key]);

        // The former streams are gone; each new one holds only its owner's events, with the owner recorded.
        expect((await store.readStream(shared)).revision).toBe(-1);
        const uStream = await store.readStream(preferenceStreamId(U.user, U.key));
        expect(uStream.events.map((e) => e.data.key)).toEqual([U.key, U.key]);
        expect(uStream.events.every((e) => JSON.stringify(e.metadata.owner) === JSON.stringify({ userId: U.user, key: U.key }))).toBe(true);

        // Writes after the migration land on the new streams.
        if (start === 1) expect((await send(system, 'put', await as(V.user), `${P}/${V.key}`, { theme: 'light' })).status).toBe(200);
      } finally {
        await system.stop();
      }
    }
  });

  it("refuses a stream that holds another owner's event instead of answering with it", async () => {
    const store = new SqliteEventStore(join(dir, 'preference.sqlite'));
    const system = await startTestSystem([service(store)]);
    try {
      const v = await system.auth(V.user);
      // An event of u placed in v's stream (as a bug or a hand-edited store would): v must not get u's document.
      await store.appendToStream(
        preferenceStreamId(V.user, V.key),
        [{ ...written(V.key, { secret: 'of u' }), metadata: { owner: { userId: U.user, key: V.key } } }],
        { expectedRevision: 'no_stream' },
      );
      const answer = await send(system, 'post', v, `${P}/${V.key}/x`, { payload: { y: 1 } });
      expect(answer.status).toBe(500);
      expect(JSON.stringify(answer.body)).not.toContain('of u');
    } finally {
      await system.stop();
    }
  });
});
