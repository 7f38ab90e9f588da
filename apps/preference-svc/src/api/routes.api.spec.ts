import type { TestSystem } from '@udp/test-system';
import { P, jsonRequest, startPreferenceSystem } from '../testing/preference-system';

let system: TestSystem;
let alice: string;
let bob: string;

beforeEach(async () => {
  ({ system, alice, bob } = await startPreferenceSystem({
    maxBodyBytes: 64 * 1024,
    limits: { maxDocumentBytes: 2048, maxKeyLength: 64, maxPathDepth: 8 },
  }));
});
afterEach(() => system.stop());

const get = (auth: string, path: string) => system.http.get(path).set('authorization', auth);
const put = jsonRequest(() => system, 'put');
const post = jsonRequest(() => system, 'post');
const del = (auth: string, path: string) => system.http.delete(path).set('authorization', auth);
const fieldsOf = (res: { body: { errors?: Array<{ field: string }> } }) => (res.body.errors ?? []).map((e) => e.field);

describe('GET /api/preference: the keys', () => {
  it('lists the keys of the user in ascending order, without deleted ones', async () => {
    expect((await get(alice, P)).body).toEqual([]);
    await put(alice, `${P}/player`, { volume: 3 });
    await put(alice, `${P}/app%2Fsettings`, { theme: 'dark' });
    await put(alice, `${P}/old`, { x: 1 });
    await del(alice, `${P}/old`);
    const res = await get(alice, P);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(['app/settings', 'player']);
  });
});

describe('PUT / GET / DELETE a whole document', () => {
  it('creates (201), reads, replaces (200) and deletes (204, then 404)', async () => {
    const created = await put(alice, `${P}/settings`, { theme: 'dark', unknown: { kept: true } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ theme: 'dark', unknown: { kept: true } });
    expect((await get(alice, `${P}/settings`)).body).toEqual({ theme: 'dark', unknown: { kept: true } });
    const replaced = await put(alice, `${P}/settings`, { theme: 'light' });
    expect(replaced.status).toBe(200);
    expect((await get(alice, `${P}/settings`)).body).toEqual({ theme: 'light' });
    expect((await del(alice, `${P}/settings`)).status).toBe(204);
    const gone = await get(alice, `${P}/settings`);
    expect(gone.status).toBe(404);
    expect(gone.headers['content-type']).toMatch(/application\/problem\+json/);
    expect((await del(alice, `${P}/settings`)).status).toBe(404);
  });

  it('accepts keys with any character, URL-encoded', async () => {
    const key = 'urn:rts:app/ios settings?#';
    expect((await put(alice, `${P}/${encodeURIComponent(key)}`, { a: 1 })).status).toBe(201);
    expect((await get(alice, `${P}/${encodeURIComponent(key)}`)).body).toEqual({ a: 1 });
    expect((await get(alice, P)).body).toEqual([key]);
  });

  it('refuses an array or a scalar at the root with 400, storing nothing', async () => {
    for (const body of [[1, 2], 'text', 5, null]) {
      const res = await put(alice, `${P}/settings`, body);
      expect(res.status).toBe(400);
      expect(fieldsOf(res)).toEqual(['body']);
    }
    expect((await get(alice, `${P}/settings`)).status).toBe(404);
    expect((await get(alice, P)).body).toEqual([]);
  });

  it('refuses malformed JSON (400), another content type (415), and a missing body (400)', async () => {
    expect((await system.http.put(`${P}/k`).set('authorization', alice).set('content-type', 'application/json').send('{"a":')).status).toBe(
      400,
    );
    expect((await system.http.put(`${P}/k`).set('authorization', alice).set('content-type', 'text/plain').send('a')).status).toBe(415);
    expect((await system.http.put(`${P}/k`).set('authorization', alice)).status).toBe(400);
    expect((await system.http.put(`${P}/k/a`).set('authorization', alice)).status).toBe(400);
  });
});

describe('paths', () => {
  it('a PUT to a path on a fresh account creates the document and its parents (the mobile apps do this)', async () => {
    const res = await put(alice, `${P}/favorites/favorites/urn:show:1/date`, 1_700_000_000_000);
    expect(res.status).toBe(201);
    expect(res.body).toBe(1_700_000_000_000);
    expect((await get(alice, `${P}/favorites`)).body).toEqual({ favorites: { 'urn:show:1': { date: 1_700_000_000_000 } } });
    expect((await get(alice, `${P}/favorites/favorites/urn:show:1/date`)).body).toBe(1_700_000_000_000);
    // Reads may use the leading-slash shape of the spec.
    expect((await get(alice, `${P}/favorites//favorites/urn:show:1`)).body).toEqual({ date: 1_700_000_000_000 });
  });

  it('GET at a path answers the value, any JSON value, and 404 where nothing is', async () => {
    await put(alice, `${P}/s`, { list: [{ id: 'a' }, { id: 'b' }], flag: false, none: null, name: 'x' });
    expect((await get(alice, `${P}/s/list/1/id`)).body).toBe('b');
    expect((await get(alice, `${P}/s/flag`)).text).toBe('false');
    expect((await get(alice, `${P}/s/none`)).text).toBe('null');
    for (const path of ['list/2', 'list/x', 'name/length', 'missing', 'constructor', '__proto__']) {
      expect((await get(alice, `${P}/s/${path}`)).status).toBe(404);
    }
    expect((await get(alice, `${P}/nothing/a`)).status).toBe(404);
  });

  it('ignores jsonpath when a path is present', async () => {
    await put(alice, `${P}/s`, { a: { b: 1 }, c: 2 });
    expect((await get(alice, `${P}/s/a?jsonpath=$.c`)).body).toEqual({ b: 1 });
  });

  it('PUT at a path replaces, POST merges objects; both keep the rest', async () => {
    await put(alice, `${P}/s`, { player: { volume: 3, quality: 'hd' }, theme: 'dark' });
    expect((await put(alice, `${P}/s/player`, { volume: 5 })).body).toEqual({ volume: 5 });
    expect((await get(alice, `${P}/s`)).body).toEqual({ player: { volume: 5 }, theme: 'dark' });
    const merged = await post(alice, `${P}/s/player`, { payload: { quality: 'sd', subtitles: { lang: 'fr' } } });
    expect(merged.status).toBe(200);
    expect(merged.body).toEqual({ volume: 5, quality: 'sd', subtitles: { lang: 'fr' } });
    expect((await post(alice, `${P}/s/theme`, { payload: null })).body).toBeNull();
    expect((await get(alice, `${P}/s`)).body).toEqual({ player: { volume: 5, quality: 'sd', subtitles: { lang: 'fr' } }, theme: null });
  });

  it('POST requires the payload key', async () => {
    const res = await post(alice, `${P}/s/a`, { value: 1 });
    expect(res.status).toBe(400);
    expect(fieldsOf(res)).toEqual(['payload']);
    expect((await get(alice, `${P}/s`)).status).toBe(404);
  });

  it('writes array elements by index, appends at the length, and refuses out of range, names in arrays and scalars on the way', async () => {
    await put(alice, `${P}/s`, { list: [1, 2], name: 'x' });
    expect((await put(alice, `${P}/s/list/0`, 'one')).status).toBe(200);
    expect((await put(alice, `${P}/s/list/2`, 3)).status).toBe(200);
    expect((await get(alice, `${P}/s/list`)).body).toEqual(['one', 2, 3]);
    for (const path of ['list/9', 'list/x', 'list/-1', 'name/first', 'list/9/a']) {
      const res = await put(alice, `${P}/s/${path}`, 1);
      expect(res.status).toBe(400);
      expect(fieldsOf(res)).toEqual(['path']);
    }
    expect((await get(alice, `${P}/s`)).body).toEqual({ list: ['one', 2, 3], name: 'x' });
  });

  it('DELETE at a path removes that part (array elements are spliced) and 404s where nothing is', async () => {
    await put(alice, `${P}/s`, { a: { b: 1, c: 2 }, list: [1, 2, 3] });
    expect((await del(alice, `${P}/s/a/b`)).status).toBe(204);
    expect((await del(alice, `${P}/s/list/0`)).status).toBe(204);
    expect((await get(alice, `${P}/s`)).body).toEqual({ a: { c: 2 }, list: [2, 3] });
    expect((await del(alice, `${P}/s/a/zz`)).status).toBe(404);
    expect((await del(alice, `${P}/nothing/a`)).status).toBe(404);
  });

  it('refuses empty segments and empty keys with 400', async () => {
    expect(fieldsOf(await put(alice, `${P}/s/a//b`, 1))).toEqual(['path']);
    expect(fieldsOf(await put(alice, `${P}/s/a/`, 1))).toEqual(['path']);
    expect((await put(alice, `${P}/`, { a: 1 })).status).toBe(400);
    const emptyKey = await put(alice, `${P}//a`, 1);
    expect(emptyKey.status).toBe(400);
    expect(fieldsOf(emptyKey)).toEqual(['key']);
    expect((await get(alice, P)).body).toEqual([]);
  });
});

describe('JSONPath', () => {
  beforeEach(async () => {
    await put(alice, `${P}/s`, { theme: 'dark', favorites: { 'urn:a': { date: 1 }, 'urn:b': { date: 2 } }, list: [10, 20, 30] });
  });

  it('GET answers the value of a definite expression, the matches of any other, 404 when a definite one names nothing', async () => {
    expect((await get(alice, `${P}/s?jsonpath=${encodeURIComponent('$.theme')}`)).body).toBe('dark');
    expect((await get(alice, `${P}/s?jsonpath=${encodeURIComponent("$.favorites['urn:b'].date")}`)).body).toBe(2);
    expect((await get(alice, `${P}/s?jsonpath=${encodeURIComponent('$..date')}`)).body).toEqual([1, 2]);
    expect((await get(alice, `${P}/s?jsonpath=${encodeURIComponent('$.list[1:]')}`)).body).toEqual([20, 30]);
    expect((await get(alice, `${P}/s?jsonpath=${encodeURIComponent('$..nothing')}`)).body).toEqual([]);
    expect((await get(alice, `${P}/s?jsonpath=${encodeURIComponent('$.nothing')}`)).status).toBe(404);
  });

  it('DELETE with jsonpath removes every match (partial deletion)', async () => {
    expect((await del(alice, `${P}/s?jsonpath=${encodeURIComponent('$..date')}`)).status).toBe(204);
    expect((await del(alice, `${P}/s?jsonpath=${encodeURIComponent('$.list[0,2]')}`)).status).toBe(204);
    expect((await get(alice, `${P}/s`)).body).toEqual({ theme: 'dark', favorites: { 'urn:a': {}, 'urn:b': {} }, list: [20] });
    expect((await del(alice, `${P}/s?jsonpath=${encodeURIComponent('$.nothing')}`)).status).toBe(204);
  });

  it('cannot run code: script injection is refused with 400, and the service keeps answering', async () => {
    const injections = [
      "$..[?(@.constructor.constructor('return process')().exit())]",
      "$[(@.constructor.constructor('return process')().exit())]",
    ];
    for (const expression of injections) {
      const read = await get(alice, `${P}/s?jsonpath=${encodeURIComponent(expression)}`);
      expect(read.status).toBe(400);
      expect(fieldsOf(read)).toEqual(['jsonpath']);
      expect((await del(alice, `${P}/s?jsonpath=${encodeURIComponent(expression)}`)).status).toBe(400);
    }
    expect((await get(alice, `${P}/s/theme`)).body).toBe('dark');
  });

  it('refuses a malformed expression or an RFC 9535 filter with 400 naming jsonpath, never a partial answer', async () => {
    for (const expression of ['$[', '$[?@.a]', '$[?@.theme]', 'theme', '$.', '$..', "$['a", '$.a[1', '$]']) {
      for (const res of [
        await get(alice, `${P}/s?jsonpath=${encodeURIComponent(expression)}`),
        await del(alice, `${P}/s?jsonpath=${encodeURIComponent(expression)}`),
      ]) {
        expect([expression, res.status]).toEqual([expression, 400]);
        expect(fieldsOf(res)).toEqual(['jsonpath']);
      }
    }
    const filter = await get(alice, `${P}/s?jsonpath=${encodeURIComponent('$[?@.a]')}`);
    expect(filter.body.errors).toEqual([{ field: 'jsonpath', message: 'filter and script expressions are not supported' }]);
    expect((await get(alice, `${P}/s/theme`)).body).toBe('dark');
  });

  it('refuses an empty or too long expression', async () => {
    expect((await get(alice, `${P}/s?jsonpath=`)).status).toBe(400);
    expect((await get(alice, `${P}/s?jsonpath=${'$'.repeat(1025)}`)).status).toBe(400);
  });
});

describe('limits', () => {
  it('refuses a document past the size limit with 413 and stores nothing', async () => {
    const big = await put(alice, `${P}/s`, { text: 'x'.repeat(3000) });
    expect(big.status).toBe(413);
    expect((await get(alice, `${P}/s`)).status).toBe(404);
    await put(alice, `${P}/s`, { text: 'x'.repeat(1000) });
    expect((await put(alice, `${P}/s/more`, 'y'.repeat(1100))).status).toBe(413);
    expect((await post(alice, `${P}/s/more`, { payload: 'y'.repeat(1100) })).status).toBe(413);
    expect(Object.keys((await get(alice, `${P}/s`)).body)).toEqual(['text']);
  });

  it('refuses a body past the request limit with 413', async () => {
    expect((await put(alice, `${P}/s`, { text: 'x'.repeat(70 * 1024) })).status).toBe(413);
  });

  it('refuses a key past the length limit, a path past the depth limit and a too deeply nested document with 400', async () => {
    expect(fieldsOf(await put(alice, `${P}/${'k'.repeat(65)}`, { a: 1 }))).toEqual(['key']);
    expect(fieldsOf(await put(alice, `${P}/s/1/2/3/4/5/6/7/8/9`, 1))).toEqual(['path']);
    let deep: unknown = 1;
    for (let i = 0; i < 9; i++) deep = { d: deep };
    expect(fieldsOf(await put(alice, `${P}/s`, deep))).toEqual(['body']);
    expect(fieldsOf(await put(alice, `${P}/s/a/b`, { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } }))).toEqual(['body']);
    expect((await get(alice, P)).body).toEqual([]);
  });

  it('refuses a pathologically deep body without a 500', async () => {
    const res = await system.http
      .put(`${P}/s`)
      .set('authorization', alice)
      .set('content-type', 'application/json')
      .send(`{"a":${'['.repeat(30000)}${']'.repeat(30000)}}`);
    expect(res.status).toBe(400);
  });
});

describe('identity and isolation', () => {
  it('answers 401 without credentials', async () => {
    expect((await system.http.get(P)).status).toBe(401);
    expect((await system.http.put(`${P}/s`).send({ a: 1 })).status).toBe(401);
  });

  it('keeps users apart: another user sees 404 and an empty key list, and cannot change or delete', async () => {
    await put(alice, `${P}/secret`, { a: 1 });
    expect((await get(bob, P)).body).toEqual([]);
    expect((await get(bob, `${P}/secret`)).status).toBe(404);
    expect((await get(bob, `${P}/secret/a`)).status).toBe(404);
    expect((await del(bob, `${P}/secret`)).status).toBe(404);
    expect((await del(bob, `${P}/secret/a`)).status).toBe(404);
    expect((await put(bob, `${P}/secret/b`, 2)).status).toBe(201);
    expect((await get(alice, `${P}/secret`)).body).toEqual({ a: 1 });
    expect((await get(bob, `${P}/secret`)).body).toEqual({ b: 2 });
  });
});
