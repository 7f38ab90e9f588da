import request from 'supertest';
import { IDENTITY_HEADER } from '@udp/auth';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createProfileService } from '../app';

/**
 * GET /internal/profile/changes, what the gateway's live sync pulls: asked of the service itself as a user (the signed
 * identity header, as the gateway asks it); the changes are made through the gateway, as a device makes them.
 */
const P = '/api/profile/v3';
let system: TestSystem;
let alice: string;
let bob: string;
beforeEach(async () => {
  system = await startTestSystem([{ prefixes: ['/api/profile'], create: createProfileService }]);
  alice = await system.auth('alice');
  bob = await system.auth('bob');
});
afterEach(() => system.stop());

const update = (auth: string, body: unknown) =>
  system.http.put(P).set('authorization', auth).set('content-type', 'application/json').send(JSON.stringify(body));
const changes = (userId: string, query = '') =>
  request(system.deps[0].serviceUrls['/api/profile'])
    .get(`/internal/profile/changes${query}`)
    .set(IDENTITY_HEADER, system.deps[0].identity.sign({ userId }));
const pageOf = async (userId: string, query = '') => {
  const res = await changes(userId, query);
  expect(res.status).toBe(200);
  return res.body as { changes: Array<{ profile: Record<string, unknown>; position: number }>; applied: number };
};

describe('GET /internal/profile/changes', () => {
  it('without since: no change, only the head (0 before the profile exists)', async () => {
    expect(await pageOf('alice')).toEqual({ changes: [], applied: 0 });
    await system.http.get(P).set('authorization', alice);
    expect(await pageOf('alice')).toEqual({ changes: [], applied: 1 });
  });

  it('gives the profile, as GET /api/profile/v3 shows it, if it changed at or after since; once', async () => {
    await system.http.get(P).set('authorization', alice);
    await update(alice, { displayName: 'Alice', language: 'fr' });
    const shown = (await system.http.get(P).set('authorization', alice)).body as Record<string, unknown>;
    expect(await pageOf('alice', '?since=0')).toEqual({ changes: [{ profile: shown, position: 2 }], applied: 2 });
    expect(await pageOf('alice', '?since=1')).toEqual({ changes: [{ profile: shown, position: 2 }], applied: 2 });
    // From the position after its last change: nothing.
    expect(await pageOf('alice', '?since=2')).toEqual({ changes: [], applied: 2 });
    // A position past the profile's (a profile erased and begun again): from its beginning.
    expect((await pageOf('alice', '?since=9')).changes).toEqual([{ profile: shown, position: 2 }]);
  });

  it("selects by the signed identity alone: another user's profile never shows", async () => {
    await update(alice, { displayName: 'Secret Alice' });
    expect(await pageOf('bob', '?since=0')).toEqual({ changes: [], applied: 0 });
    await update(bob, { displayName: 'Bob' });
    const bobs = await pageOf('bob', '?since=0');
    expect(bobs.changes.map((c) => c.profile.displayName)).toEqual(['Bob']);
    expect((await system.http.get('/internal/profile/changes?since=0').set('authorization', bob)).status).toBe(404);
    expect((await request(system.deps[0].serviceUrls['/api/profile']).get('/internal/profile/changes')).status).toBe(401);
  });

  it('refuses a malformed since, naming it', async () => {
    const bad = await changes('alice', '?since=abc');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/since must be a position/);
  });
});
