import { randomUUID } from 'node:crypto';
import { given } from '@udp/test-kit';
import type { TestSystem } from '@udp/test-system';
import { startWholeSystem } from './whole-system';

/**
 * Issue 27 #6 and #8: what a request says is kept exactly or refused, once, at the edge every service shares. A lone
 * surrogate, a percent-escape that is not UTF-8, a body that is not UTF-8 or a number past the doubles would be
 * read as something else (U+FFFD, null); an array parameter would be ignored. Each is a 400 problem+json naming the
 * field, and nothing is stored.
 */
let system: TestSystem;
beforeAll(async () => {
  system = await startWholeSystem();
});
afterAll(() => system.stop());

/** A new user for each test: what one test refuses cannot show in another's answers. */
const newUser = async () => system.auth(`strings${randomUUID()}`);
/** A JSON text sent as it is (JSON.stringify writes a lone surrogate as its `\ud800` escape). */
const sendJson = (method: 'post' | 'put', path: string, auth: string, body: string | Buffer) => {
  const req = system.http[method](path).set('authorization', auth).set('content-type', 'application/json');
  // Bytes as they are: superagent would otherwise serialize a Buffer as JSON.
  return typeof body === 'string' ? req.send(body) : req.serialize(() => body as unknown as string).send(body);
};

function expectRefused(res: { status: number; headers: Record<string, string>; body: unknown }, field: string) {
  expect([res.status, res.headers['content-type']]).toEqual([400, expect.stringMatching(/^application\/problem\+json/)]);
  expect(res.body).toMatchObject({ status: 400, errors: [expect.objectContaining({ field })] });
}

describe('lone surrogates (ill-formed UTF-16)', () => {
  it("in a body: the issue's history batch of s\\ud800..s\\ud803 is refused naming the first, and nothing is stored", async () => {
    await given(newUser)
      .when(async (auth) => {
        const data = ['s\ud800', 's\ud801', 's\ud802', 's\ud803'].map((item_id) => ({ item_id, date: 1_700_000_000_000 }));
        return sendJson('post', '/api/history/v2/batch', auth, JSON.stringify({ data }));
      })
      .then(async (res, auth) => {
        expectRefused(res, 'data[0].item_id');
        expect((await system.http.get('/api/history/v2').set('authorization', auth)).body).toMatchObject({ data: [], total: 0 });
      });
  });

  it('in a body, at any depth and in a key, in every service', async () => {
    const auth = await newUser();
    const cases: Array<[method: 'post' | 'put', path: string, body: unknown, field: string]> = [
      ['put', '/api/preference/ui', { theme: { colours: ['red', 'x\udfff'] } }, 'theme.colours[1]'],
      ['put', '/api/preference/ui', { ok: 1, nested: { ['k\ud800']: 1 } }, 'nested.k\ufffd'],
      ['put', '/api/preference/ui/a/b', 'lone \udc00 low', 'body'],
      ['post', '/api/playlist/v2', { name: 'x\ud83c' }, 'name'],
      ['post', '/api/playlist/v3/new/bookmarks', { businessId: 'b\ud800', itemId: 'i', name: 'n' }, 'businessId'],
      ['put', '/api/profile/v3', { displayName: '\ud800' }, 'displayName'],
      ['post', '/api/data/export', { ['\udbff']: true }, '\ufffd'],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await sendJson(method, path, auth, JSON.stringify(body));
      expect([path, res.status, res.body.errors]).toEqual([path, 400, [expect.objectContaining({ field })]]);
    }
    // A pair (one character beyond U+FFFF) is text: kept as sent.
    expect((await sendJson('put', '/api/preference/ui', auth, JSON.stringify({ theme: '\ud83c\udfa7' }))).status).toBeLessThan(300);
    expect((await system.http.get('/api/preference/ui').set('authorization', auth)).body).toEqual({ theme: '🎧' });
  });

  it('in a query parameter (an encoded surrogate): 400 naming the parameter', async () => {
    await given(newUser)
      .when((auth) => system.http.get('/api/history/v2?limit=1&before_item_id=s%ED%A0%80').set('authorization', auth))
      .then((res) => expectRefused(res, 'before_item_id'));
  });

  it('in a path parameter (an encoded surrogate): 400 naming the path', async () => {
    await given(newUser)
      .when((auth) => system.http.delete('/api/history/v2/s%ED%A0%80').set('authorization', auth))
      .then((res) => expectRefused(res, 'path'));
  });
});

describe('input that would be read as something else', () => {
  it('a number that overflows to Infinity (1e309) is refused, not stored as null', async () => {
    await given(newUser)
      .when(async (auth) => [
        await sendJson('put', '/api/preference/big', auth, '{"a":1e309}'),
        await sendJson('put', '/api/preference/big', auth, '{"a":[1,-1e400]}'),
        await sendJson('put', '/api/preference/big/a', auth, '1e999'),
      ])
      .then(async ([object, nested, bare], auth) => {
        expectRefused(object, 'a');
        expectRefused(nested, 'a[1]');
        expectRefused(bare, 'body');
        expect((await system.http.get('/api/preference/big').set('authorization', auth)).status).toBe(404);
      });
  });

  it('a body that is not UTF-8 is refused, not read with U+FFFD in it', async () => {
    await given(newUser)
      .when((auth) =>
        sendJson('put', '/api/preference/raw', auth, Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff]), Buffer.from('"}')])),
      )
      .then((res) => expectRefused(res, 'body'));
  });

  it('a body in a charset other than UTF-8 is refused with 415, not decoded with U+FFFD in it', async () => {
    // UTF-32 with a code point beyond U+10FFFF: body-parser would decode it as U+FFFD.
    const utf32 = Buffer.alloc(4 * 9);
    [...'{"a":"x"}'].forEach((c, i) => utf32.writeUInt32LE(c === 'x' ? 0x110000 : c.charCodeAt(0), i * 4));
    await given(newUser)
      .when((auth) =>
        system.http
          .put('/api/preference/raw')
          .set('authorization', auth)
          .set('content-type', 'application/json; charset=utf-32le')
          .serialize(() => utf32 as unknown as string)
          .send(utf32 as never),
      )
      .then(async (res, auth) => {
        expect([res.status, res.body.title]).toEqual([415, 'Unsupported Media Type']);
        expect((await system.http.get('/api/preference/raw').set('authorization', auth)).status).toBe(404);
      });
  });

  it.each([
    ['%FF', 'before_item_id=%FF'],
    ['an encoded overlong /', 'before_item_id=%C0%AF'],
    ['a cut escape', 'before_item_id=a%E0%A4%A'],
    ['a broken escape', 'before_item_id=%zz'],
  ])('a query value with %s is refused naming the parameter, not read as U+FFFD', async (_what, query) => {
    await given(newUser)
      .when((auth) => system.http.get(`/api/history/v2?${query}`).set('authorization', auth))
      .then((res) => expectRefused(res, 'before_item_id'));
  });

  it('a query name that is not UTF-8 is refused', async () => {
    await given(newUser)
      .when((auth) => system.http.get('/api/playlist/v3?%FF=1').set('authorization', auth))
      .then((res) => expectRefused(res, '%FF'));
  });

  it.each([
    ['/api/history/v2?limit[]=1', 'limit[]'],
    ['/api/history/v2?limit%5B%5D=1', 'limit[]'],
    ['/api/history/v2?limit[x]=1', 'limit[x]'],
    ['/api/playlist/v3/watch_later/bookmarks?ids[]=1', 'ids[]'],
  ])('an array or object parameter (%s) is refused naming it, not ignored', async (path, field) => {
    await given(newUser)
      .when((auth) => (path.includes('bookmarks') ? system.http.delete(path) : system.http.get(path)).set('authorization', auth))
      .then((res) => expectRefused(res, field));
  });

  it('a parameter given twice where one value is expected is refused naming it', async () => {
    await given(newUser)
      .when((auth) => system.http.get('/api/history/v2?limit=1&limit=2').set('authorization', auth))
      .then((res) => expectRefused(res, 'limit'));
  });

  it.each([
    ['post', '/api/playlist/v2', { name: 'a\u0000b' }],
    ['post', '/api/playlist/v2/new/bookmarks', { media_id: 'm', name: 'a\u001fb' }],
    ['post', '/api/playlist/v3/new/bookmarks', { businessId: 'b', itemId: 'i', name: '\u007f' }],
    ['post', '/api/playlist/v3/favs', { name: 'tab\there' }],
  ] as const)('a playlist name with a control character is refused (%s %s)', async (method, path, body) => {
    await given(newUser)
      .when(async (auth) => [auth, await sendJson(method, path, auth, JSON.stringify(body))] as const)
      .then(async ([auth, res]) => {
        expectRefused(res, 'name');
        const listed = (await system.http.get('/api/playlist/v3').set('authorization', auth)).body;
        expect(listed.playlists.map((p: { name: string }) => p.name)).toEqual(['Watch later']);
      });
  });
});
