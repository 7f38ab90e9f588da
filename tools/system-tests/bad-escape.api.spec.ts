import { given } from '@udp/test-kit';
import type { TestSystem } from '@udp/test-system';
import { startWholeSystem } from './whole-system';

/**
 * A path with a broken `%` escape cannot be decoded: every service answers 400 problem+json naming the path,
 * never a 500, and no answer ever carries a stack trace.
 */
let system: TestSystem;
let alice: string;
beforeAll(async () => {
  system = await startWholeSystem();
  alice = await system.auth('alice');
});
afterAll(() => system.stop());

const BROKEN = ['%ff', '%E0%A4%A', '%', '%zz', 'a%2', '%C0%AF', '%ED%A0%80'];
const PATHS = [
  '/api/v2/items/{x}',
  '/api/v2/icons/{x}',
  '/api/history/{x}',
  '/api/history/v2/{x}',
  '/api/playlist/v2/{x}',
  '/api/playlist/v2/{x}/bookmarks/1',
  '/api/playlist/v3/{x}',
  '/api/playlist/v3/business/{x}',
  '/api/preference/{x}',
  '/api/preference/settings/{x}',
  '/api/preference/{x}/a/b',
  '/api/profile/v3/public/{x}',
  '/api/{x}',
  '/{x}',
];
const METHODS = ['get', 'put', 'post', 'delete'] as const;

/** The whole system, started once for the file: the state every test here reads. */
const started = () => undefined;
const send = (method: (typeof METHODS)[number], path: string) => {
  const req = system.http[method](path).set('authorization', alice);
  return method === 'get' || method === 'delete' ? req : req.set('content-type', 'application/json').send('{}');
};

describe('a broken % escape in the path', () => {
  const cases = PATHS.flatMap((path) => BROKEN.map((bad) => [path.replace('{x}', bad)] as const));

  it.each(cases)('%s: 400 problem+json for every method, no stack trace', async (path) => {
    for (const method of METHODS) {
      await given(started)
        .when(() => send(method, path))
        .then((res) => {
          expect({ method, status: res.status }).toEqual({ method, status: 400 });
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(res.body).toMatchObject({ status: 400, title: 'Bad Request' });
          expect(res.text).not.toMatch(/\bat .+:\d+:\d+|URIError|node_modules/);
        });
    }
  });

  it('is refused before authentication too (a request without credentials gets the same 400)', async () => {
    await given(started)
      .when(() => system.http.get('/api/history/v2/%ff'))
      .then((res) => expect(res.status).toBe(400));
  });
});
