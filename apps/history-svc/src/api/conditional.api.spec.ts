import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createHistoryService } from '../app';

let system: TestSystem;
beforeEach(async () => {
  system = await startTestSystem([
    { prefixes: ['/api/history'], create: (deps) => createHistoryService({ ...deps, now: () => 1_700_000_000_000 }) },
  ]);
});
afterEach(() => system.stop());

describe('conditional GET /api/history/v2', () => {
  it('answers 304 without a body while the page is unchanged, and the new page once it changed', async () => {
    const alice = await system.auth('alice');
    const get = (etag?: string) => {
      const req = system.http.get('/api/history/v2?limit=10').set('authorization', alice);
      return etag ? req.set('if-none-match', etag) : req;
    };
    await system.http.post('/api/history/v2').set('authorization', alice).send({ item_id: 'urn:a' });
    const first = await get();
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('private, no-cache');
    const unchanged = await get(first.headers.etag);
    expect([unchanged.status, unchanged.text ?? '']).toEqual([304, '']);
    expect((await get(`"other", ${first.headers.etag}`)).status).toBe(304);
    await system.http.post('/api/history/v2').set('authorization', alice).send({ item_id: 'urn:b' });
    const changed = await get(first.headers.etag);
    expect(changed.status).toBe(200);
    expect(changed.body.data).toHaveLength(2);
  });

  it('tags another query, or another user with the same history, differently', async () => {
    const [alice, bob] = [await system.auth('alice'), await system.auth('bob')];
    for (const user of [alice, bob]) await system.http.post('/api/history/v2').set('authorization', user).send({ item_id: 'urn:a' });
    const etag = async (user: string, query: string) =>
      (await system.http.get(`/api/history/v2${query}`).set('authorization', user)).headers.etag as string;
    const tags = new Set([await etag(alice, '?limit=10'), await etag(alice, '?limit=5'), await etag(bob, '?limit=10')]);
    expect(tags.size).toBe(3);
    expect(await etag(alice, '?limit=10')).toBe(await etag(alice, '?limit=10'));
  });
});
