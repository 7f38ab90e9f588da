import { given } from '@udp/test-kit';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createHistoryService } from '../app';

let system: TestSystem;
beforeEach(async () => {
  system = await startTestSystem([
    { prefixes: ['/api/history'], create: (deps) => createHistoryService({ ...deps, now: () => 1_700_000_000_000 }) },
  ]);
});
afterEach(() => system.stop());

const record = (auth: string, itemId: string) => system.http.post('/api/history/v2').set('authorization', auth).send({ item_id: itemId });
const page = (auth: string, query: string, etag?: string) => {
  const req = system.http.get(`/api/history/v2${query}`).set('authorization', auth);
  return etag ? req.set('if-none-match', etag) : req;
};

describe('conditional GET /api/history/v2', () => {
  it('answers 304 without a body while the page is unchanged, and the new page once it changed', async () => {
    const alice = await system.auth('alice');
    /** Alice's page of one item, read once: its ETag. */
    const readOnce = async () => {
      await record(alice, 'urn:a');
      const first = await page(alice, '?limit=10');
      expect(first.status).toBe(200);
      expect(first.headers['cache-control']).toBe('private, no-cache');
      return first.headers.etag as string;
    };

    await given(readOnce)
      .when((etag) => page(alice, '?limit=10', etag))
      .then((unchanged) => expect([unchanged.status, unchanged.text ?? '']).toEqual([304, '']));

    await given(readOnce)
      .when((etag) => page(alice, '?limit=10', `"other", ${etag}`))
      .then((unchanged) => expect(unchanged.status).toBe(304));

    await given(async () => {
      const etag = await readOnce();
      await record(alice, 'urn:b');
      return etag;
    })
      .when((etag) => page(alice, '?limit=10', etag))
      .then((changed) => {
        expect(changed.status).toBe(200);
        expect(changed.body.data).toHaveLength(2);
      });
  });

  it('tags another query, or another user with the same history, differently', async () => {
    const [alice, bob] = [await system.auth('alice'), await system.auth('bob')];
    const etag = async (user: string, query: string) => (await page(user, query)).headers.etag as string;

    await given(async () => {
      for (const user of [alice, bob]) await record(user, 'urn:a');
    })
      .when(async () => [await etag(alice, '?limit=10'), await etag(alice, '?limit=5'), await etag(bob, '?limit=10')])
      .then(async (tags) => {
        expect(new Set(tags).size).toBe(3);
        expect(await etag(alice, '?limit=10')).toBe(tags[0]);
      });
  });
});
