import { JSONPath } from 'jsonpath-plus';
import { given } from '@udp/test-kit';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createPreferenceService } from '../app';

/**
 * Issue 18: one JSONPath query on a nested document held the event loop for 9-25 s (`$..a` eight times on a
 * document 31 levels deep took minutes and ran out of memory). Every evaluation now has a budget of steps,
 * counted before the library runs; past it, a 400 names the limit. The service runs with its default limits.
 */
let system: TestSystem;
let alice: string;

beforeEach(async () => {
  system = await startTestSystem([{ prefixes: ['/api/preference'], create: (deps) => createPreferenceService(deps) }]);
  alice = await system.auth('alice');
});
afterEach(() => system.stop());

const P = '/api/preference';
const put = (path: string, body: unknown) =>
  system.http.put(path).set('authorization', alice).set('content-type', 'application/json').send(JSON.stringify(body));
const get = (path: string) => system.http.get(path).set('authorization', alice);
const del = (path: string) => system.http.delete(path).set('authorization', alice);
const withJsonPath = (expression: string) => `${P}/nested?jsonpath=${encodeURIComponent(expression)}`;
const nothing = () => undefined;

/** `{"a":{"a":...{"zz":1}}}`, 31 objects deep (the service accepts 32). */
function nested(depth: number): Record<string, unknown> {
  let document: Record<string, unknown> = { zz: 1 };
  for (let i = 1; i < depth; i++) document = { a: document };
  return document;
}
/** Eight descendant segments, the most an expression may hold: about C(30, 7) = 2 million steps on it. */
const HOSTILE = '$' + '..a'.repeat(7) + '..zz';
/** The issue's expression: nine descendant segments. */
const ISSUE = '$' + '..a'.repeat(8) + '..zz';

describe('given a preference nested 31 levels deep', () => {
  beforeEach(async () => {
    expect((await put(`${P}/nested`, nested(31))).status).toBe(201);
  });

  it.each([
    ['GET', get],
    ['DELETE', del],
  ])('when %s asks for $..a seven times, then a 400 names the limit at once, and the document is as it was', async (method, send) => {
    await given(nothing)
      .when(async () => {
        const started = performance.now();
        const res = await send(withJsonPath(HOSTILE));
        return { res, ms: performance.now() - started };
      })
      .then(async ({ res, ms }) => {
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        expect(res.body.detail).toMatch(/more than 100000 steps \(the limit PREFERENCE_MAX_JSONPATH_STEPS\)/);
        expect(res.body.errors).toEqual([expect.objectContaining({ field: 'jsonpath' })]);
        // The whole request through the gateway; the refusal itself takes under a millisecond (before: 9-25 s and more).
        process.stdout.write(`[jsonpath-bounds] refused_ms=${Math.round(ms)} (${method} $..a x7; target: refused_ms < 1000)\n`);
        // What holds on any machine, busy or not: no walk of seconds before the refusal; the target is printed.
        expect(ms).toBeLessThan(5000);
        expect((await get(`${P}/nested`)).body).toEqual(nested(31));
      });
  });

  it.each([
    ['GET', get],
    ['DELETE', del],
  ])('when %s asks for the issue expression (nine descendant segments), then a 400 names the static limit', async (_m, send) => {
    await given(nothing)
      .when(() => send(withJsonPath(ISSUE)))
      .then((res) => {
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([{ field: 'jsonpath', message: 'at most 8 descendant (..) segments' }]);
      });
  });

  it('when the process is asked for /health/ meanwhile, then it answers (nothing holds the event loop)', async () => {
    await given(nothing)
      .when(() => Promise.all([get(withJsonPath(HOSTILE)), system.http.get('/health/')]))
      .then(([hostile, health]) => {
        expect(hostile.status).toBe(400);
        expect(health.status).toBe(200);
      });
  });

  it('when an expression stays within the budget, then it is answered as before', async () => {
    await given(nothing)
      .when(() => get(withJsonPath('$..a..a..zz')))
      .then((res) => {
        expect(res.status).toBe(200);
        expect(res.body).toHaveLength(435); // C(30, 2): every pair of the 30 `a` above the leaf, as the library counts
      });
  });
});

describe('the static limits of an expression, stated in the OpenAPI document', () => {
  /** Alice's preference nested = { a: [1, 2] }: the state every test here starts from. */
  beforeEach(async () => {
    await put(`${P}/nested`, { a: [1, 2] });
  });

  it('refuses a ninth descendant segment and a union of 33 indexes with a 400 naming jsonpath', async () => {
    for (const [expression, message] of [
      ['$' + '..a'.repeat(9), 'at most 8 descendant (..) segments'],
      [`$.a[${Array(33).fill(0).join(',')}]`, 'at most 32 indexes in a union [i,j,...]'],
    ]) {
      await given(nothing)
        .when(() => get(withJsonPath(expression)))
        .then((res) => {
          expect(res.status).toBe(400);
          expect(res.body.errors).toEqual([{ field: 'jsonpath', message }]);
        });
    }
    await given(nothing)
      .when(() => get(withJsonPath(`$.a[${Array(32).fill(0).join(',')}]`)))
      .then((res) => expect(res.body).toHaveLength(32));
  });

  it('documents them on the jsonpath parameter', async () => {
    await given(nothing)
      .when(async () => (await system.http.get('/openapi.json')).body)
      .then((openapi) => {
        const parameter = openapi.paths['/api/preference/{key}'].get.parameters.find((p: { name: string }) => p.name === 'jsonpath');
        expect(parameter.description).toMatch(/At most 8 descendant \(\.\.\) segments and 32 indexes in a union/);
        expect(parameter.description).toMatch(/PREFERENCE_MAX_JSONPATH_STEPS/);
        // The pattern states the two limits too, so a client (or a fuzzer) generating from it never sends one over.
        const pattern = new RegExp(parameter.schema.pattern);
        expect(pattern.test('$' + '..a'.repeat(8))).toBe(true);
        expect(pattern.test('$' + '..a'.repeat(9))).toBe(false);
        expect(pattern.test(`$.a[${Array(32).fill(0).join(',')}]`)).toBe(true);
        expect(pattern.test(`$.a[${Array(33).fill(0).join(',')}]`)).toBe(false);
      });
  });
});

describe('hostile expressions that are not about time', () => {
  it('a DELETE naming a character of a string (`$.theme[0]`) removes nothing: 204, not a 500', async () => {
    for (const expression of ['$.theme[0]', '$.theme.length']) {
      await given(() => put(`${P}/settings`, { theme: 'dark' }))
        .when(() => del(`${P}/settings?jsonpath=${encodeURIComponent(expression)}`))
        .then(async (res) => {
          expect(res.status).toBe(204);
          expect((await get(`${P}/settings`)).body).toEqual({ theme: 'dark' });
        });
    }
  });

  it('distinct expressions do not pile up in the library cache (it kept every one, forever)', async () => {
    await given(async () => {
      await put(`${P}/settings`, { theme: 'dark' });
      return JSONPath.cache as Record<string, unknown>;
    })
      .when(async () => {
        for (let i = 0; i < 20; i++) {
          await get(`${P}/settings?jsonpath=${encodeURIComponent(`$.probe_${i}..theme`)}`);
          await del(`${P}/settings?jsonpath=${encodeURIComponent(`$.probe_${i}..theme`)}`);
        }
      })
      .then((_, cache) => {
        expect(Object.keys(cache).filter((key) => key.includes('probe_'))).toEqual([]);
      });
  });
});
