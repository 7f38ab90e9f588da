import { createHash } from 'node:crypto';
import request from 'supertest';
import { IDENTITY_HEADER } from '@udp/auth';
import { historyApi } from '@udp/contracts';
import { closeServer, listen } from '@udp/runtime';
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

  it("reveals nothing of other users: their writes leave alice's ETag as it was, and it is no hash of a store position", async () => {
    const [alice, bob] = [await system.auth('alice'), await system.auth('bob')];
    await given(async () => {
      await record(alice, 'urn:a');
      return (await page(alice, '?limit=10')).headers.etag as string;
    })
      .when(async (etag) => {
        for (let i = 0; i < 5; i++) await record(bob, `urn:b${i}`);
        return { before: etag, after: await page(alice, '?limit=10', etag) };
      })
      .then(({ before, after }) => {
        expect(after.status).toBe(304);
        expect(after.headers.etag).toBe(before);
        // What a client could try: every store position up to 10,000 with the query it sent, hashed as before.
        const query = JSON.stringify(historyApi.v2.list.request!.query!.parse({ limit: '10' }));
        const sha1 = (text: string) => createHash('sha1').update(text).digest('base64url');
        const guesses = Array.from({ length: 10_001 }, (_, position) => `W/"v${sha1(`${position} ${query}`)}"`);
        // -1: no position found again (before issue 27 the tag gave alice's head position away).
        expect(guesses.indexOf(before)).toBe(-1);
      });
  });

  it('is the same from another replica of the service (the same secret), so a 304 holds across replicas', async () => {
    const alice = await system.auth('alice');
    const deps = system.deps[0];
    // A second history-svc on the same store, read models and secret, as a replica behind a load balancer.
    const replica = await createHistoryService({ ...deps, now: () => 1_700_000_000_000 });
    const { server, port } = await listen(replica.app, 0, '127.0.0.1');
    try {
      await given(async () => {
        await record(alice, 'urn:a');
        return (await page(alice, '?limit=10')).headers.etag as string;
      })
        .when((etag) =>
          request(`http://127.0.0.1:${port}`)
            .get('/api/history/v2?limit=10')
            .set(IDENTITY_HEADER, deps.identity.sign({ userId: 'alice' }))
            .set('if-none-match', etag),
        )
        .then((fromReplica) => expect(fromReplica.status).toBe(304));
    } finally {
      await closeServer(server);
      await replica.stop();
    }
  });
});
