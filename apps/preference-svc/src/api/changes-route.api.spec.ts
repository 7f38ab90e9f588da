import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { IDENTITY_HEADER } from '@udp/auth';
import { MemoryEventStore } from '@udp/eventstore';
import { MemoryReadModelStore, type ReadModelStore, SqliteReadModelStore } from '@udp/readmodel';
import { type TestSystem, startTestSystem } from '@udp/test-system';
import { createPreferenceService } from '../app';
import { preferenceStreamId } from '../domain/aggregate';
import { preferenceDocuments, preferenceKeys } from '../projections/preferences';
import { P, jsonRequest, startPreferenceSystem } from '../testing/preference-system';

/**
 * GET /internal/preference/changes, what the gateway's live sync pulls: asked of the service itself as a user (the
 * signed identity header, as the gateway asks it); the changes are made through the gateway, as a device makes them.
 */
let system: TestSystem;
let alice: string;
let bob: string;
beforeEach(async () => ({ system, alice, bob } = await startPreferenceSystem()));
afterEach(() => system.stop());

const put = jsonRequest(() => system, 'put');
const del = (auth: string, path: string) => system.http.delete(path).set('authorization', auth);
const changes = (userId: string, query = '') =>
  request(system.deps[0].serviceUrls[P])
    .get(`/internal/preference/changes${query}`)
    .set(IDENTITY_HEADER, system.deps[0].identity.sign({ userId }));
interface Page {
  changes: Array<{ preference: { key: string; deleted: boolean; document?: unknown }; position: string }>;
  position: string;
  applied: string;
  more: boolean;
}
const pageOf = async (userId: string, query = '') => {
  const res = await changes(userId, query);
  expect(res.status).toBe(200);
  return res.body as Page;
};

describe('GET /internal/preference/changes', () => {
  it('without since: no changes, only the head, where a new stream starts', async () => {
    expect(await pageOf('alice')).toEqual({ changes: [], position: '0', applied: '0', more: false });
    await put(alice, `${P}/player`, { volume: 3 });
    const head = await pageOf('alice');
    expect(head.changes).toEqual([]);
    expect(BigInt(head.position)).toBeGreaterThan(0n);
    // From the head: nothing yet.
    expect((await pageOf('alice', `?since=${head.position}`)).changes).toEqual([]);
  });

  it('gives each key changed since, once, in its state now (a deletion as a tombstone), oldest change first', async () => {
    const start = (await pageOf('alice')).position;
    await put(alice, `${P}/player`, { volume: 3 });
    await put(alice, `${P}/app%2Fsettings`, { theme: 'dark' });
    await put(alice, `${P}/gone`, { x: 1 });
    await put(alice, `${P}/player`, { volume: 4 });
    await del(alice, `${P}/gone`);
    const page = await pageOf('alice', `?since=${start}`);
    expect(page.changes.map((c) => c.preference)).toEqual([
      { key: 'app/settings', document: { theme: 'dark' }, deleted: false },
      { key: 'player', document: { volume: 4 }, deleted: false },
      { key: 'gone', deleted: true },
    ]);
    // Each as GET /api/preference/{key} shows it.
    expect((await system.http.get(`${P}/player`).set('authorization', alice)).body).toEqual({ volume: 4 });
    // Each change has its own position, growing; a complete answer ends at the last one.
    const positions = page.changes.map((c) => BigInt(c.position));
    expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions);
    expect(page).toMatchObject({ more: false, position: page.changes[2].position, applied: page.changes[2].position });
    // From a change's own position: exactly what followed it.
    const rest = await pageOf('alice', `?since=${page.changes[0].position}`);
    expect(rest.changes.map((c) => c.preference.key)).toEqual(['player', 'gone']);
    expect((await pageOf('alice', `?since=${page.position}`)).changes).toEqual([]);
  });

  it('pages at most `limit` changes; the pages together give every change once', async () => {
    const start = (await pageOf('alice')).position;
    for (let i = 0; i < 7; i++) await put(alice, `${P}/k${i}`, { i });
    const keys: string[] = [];
    let since = start;
    for (let pages = 0; ; pages++) {
      const page = await pageOf('alice', `?since=${since}&limit=3`);
      expect(page.changes.length).toBeLessThanOrEqual(3);
      keys.push(...page.changes.map((c) => c.preference.key));
      since = page.position;
      if (!page.more) break;
      expect(pages).toBeLessThan(5);
    }
    expect(keys).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6']);
  });

  it("selects by the signed identity alone: another user's keys never show", async () => {
    await put(alice, `${P}/secret`, { pin: 1234 });
    await put(bob, `${P}/own`, { x: 1 });
    const bobs = await pageOf('bob', '?since=0');
    expect(bobs.changes.map((c) => c.preference.key)).toEqual(['own']);
    expect(JSON.stringify(bobs)).not.toMatch(/secret|1234/);
    // The gateway does not route /internal; without the identity header the service refuses.
    expect((await system.http.get('/internal/preference/changes?since=0').set('authorization', bob)).status).toBe(404);
    expect((await request(system.deps[0].serviceUrls[P]).get('/internal/preference/changes?since=0')).status).toBe(401);
  });

  it('refuses a malformed since and a limit over 100, naming the field', async () => {
    const bad = await changes('alice', '?since=-1');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/since/);
    const over = await changes('alice', '?since=0&limit=101');
    expect(over.status).toBe(400);
    expect(JSON.stringify(over.body)).toMatch(/limit must be at most 100/);
  });
});

describe('a read model of before key rows carried their change position', () => {
  const dir = mkdtempSync(join(tmpdir(), 'udp-pref-changes-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  /** The read models the service of before wrote, and how this one opens them (SQLite: the same file again). */
  const earlier = async (kind: string): Promise<{ before: ReadModelStore; reopen: () => Promise<ReadModelStore> }> => {
    if (kind === 'memory') {
      const memory = new MemoryReadModelStore();
      return { before: memory, reopen: async () => memory };
    }
    const file = join(dir, 'read-models.sqlite');
    const before = await SqliteReadModelStore.open({ file });
    return {
      before,
      reopen: async () => {
        await before.close();
        return SqliteReadModelStore.open({ file });
      },
    };
  };

  it.each(['memory', 'sqlite'])(
    'gives its rows the zero position at start (%s): read from the beginning (an old cursor), not from the head',
    async (kind) => {
      const store = new MemoryEventStore();
      const { before, reopen } = await earlier(kind);
      // What the service of before left: the event, its rows without `changed`, the projection's checkpoint past it.
      const { position } = await store.appendToStream(
        preferenceStreamId('alice', 'old'),
        [
          {
            id: 'e1',
            type: 'PreferenceWritten',
            data: { key: 'old', document: { kept: true }, operation: { kind: 'replace' } },
            metadata: { owner: { userId: 'alice', key: 'old' } },
          },
        ],
        { expectedRevision: 'no_stream' },
      );
      const row = { _id: 'alice/old', userId: 'alice', key: 'old', deleted: false, revision: 0 };
      await preferenceDocuments(before).upsertIfNewer({ ...row, json: '{"kept":true}' });
      // A key row as the projection of before wrote it: no `changed`.
      await preferenceKeys(before).upsertIfNewer({ ...row, bytes: 13 });
      await before.checkpoints().save('preference-documents', position);
      const readModels = await reopen();
      await system.stop();
      system = await startTestSystem([{ prefixes: [P], create: createPreferenceService, adapters: { store, readModels } }]);
      alice = await system.auth('alice');

      expect((await pageOf('alice', '?since=0')).changes).toEqual([
        { preference: { key: 'old', document: { kept: true }, deleted: false }, position: '1' },
      ]);
      const head = await pageOf('alice');
      expect(head.position).toBe('1');
      await put(alice, `${P}/new`, { v: 1 });
      expect((await pageOf('alice', `?since=${head.position}`)).changes.map((c) => c.preference.key)).toEqual(['new']);
    },
  );
});
