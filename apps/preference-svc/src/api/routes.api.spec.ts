import { given } from '@udp/test-kit';
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
const nothing = () => undefined;
const jsonpath = (expression: string) => `${P}/s?jsonpath=${encodeURIComponent(expression)}`;

describe('GET /api/preference: the keys', () => {
  it('lists the keys of the user in ascending order, without deleted ones', async () => {
    await given(nothing)
      .when(() => get(alice, P))
      .then((res) => expect(res.body).toEqual([]));

    await given(async () => {
      await put(alice, `${P}/player`, { volume: 3 });
      await put(alice, `${P}/app%2Fsettings`, { theme: 'dark' });
      await put(alice, `${P}/old`, { x: 1 });
      await del(alice, `${P}/old`);
    })
      .when(() => get(alice, P))
      .then((res) => {
        expect(res.status).toBe(200);
        expect(res.body).toEqual(['app/settings', 'player']);
      });
  });
});

describe('PUT / GET / DELETE a whole document', () => {
  it('creates (201), reads, replaces (200) and deletes (204, then 404)', async () => {
    await given(nothing)
      .when(() => put(alice, `${P}/settings`, { theme: 'dark', unknown: { kept: true } }))
      .then(async (created) => {
        expect(created.status).toBe(201);
        expect(created.body).toEqual({ theme: 'dark', unknown: { kept: true } });
        expect((await get(alice, `${P}/settings`)).body).toEqual({ theme: 'dark', unknown: { kept: true } });
      });

    await given(nothing)
      .when(() => put(alice, `${P}/settings`, { theme: 'light' }))
      .then(async (replaced) => {
        expect(replaced.status).toBe(200);
        expect((await get(alice, `${P}/settings`)).body).toEqual({ theme: 'light' });
      });

    await given(nothing)
      .when(() => del(alice, `${P}/settings`))
      .then(async (deleted) => {
        expect(deleted.status).toBe(204);
        const gone = await get(alice, `${P}/settings`);
        expect(gone.status).toBe(404);
        expect(gone.headers['content-type']).toMatch(/application\/problem\+json/);
      });

    await given(nothing)
      .when(() => del(alice, `${P}/settings`))
      .then((deletedAgain) => expect(deletedAgain.status).toBe(404));
  });

  it('accepts keys with any character, URL-encoded', async () => {
    const key = 'urn:rts:app/ios settings?#';
    await given(nothing)
      .when(() => put(alice, `${P}/${encodeURIComponent(key)}`, { a: 1 }))
      .then(async (res) => {
        expect(res.status).toBe(201);
        expect((await get(alice, `${P}/${encodeURIComponent(key)}`)).body).toEqual({ a: 1 });
        expect((await get(alice, P)).body).toEqual([key]);
      });
  });

  it('refuses an array or a scalar at the root with 400, storing nothing', async () => {
    for (const body of [[1, 2], 'text', 5, null]) {
      await given(nothing)
        .when(() => put(alice, `${P}/settings`, body))
        .then(async (res) => {
          expect(res.status).toBe(400);
          expect(fieldsOf(res)).toEqual(['body']);
          expect((await get(alice, `${P}/settings`)).status).toBe(404);
          expect((await get(alice, P)).body).toEqual([]);
        });
    }
  });

  it('refuses malformed JSON (400), another content type (415), and a missing body (400)', async () => {
    const cases: Array<[string, () => ReturnType<typeof get>, number]> = [
      [
        'malformed JSON',
        () => system.http.put(`${P}/k`).set('authorization', alice).set('content-type', 'application/json').send('{"a":'),
        400,
      ],
      ['text', () => system.http.put(`${P}/k`).set('authorization', alice).set('content-type', 'text/plain').send('a'), 415],
      ['no body', () => system.http.put(`${P}/k`).set('authorization', alice), 400],
      ['no body at a path', () => system.http.put(`${P}/k/a`).set('authorization', alice), 400],
    ];
    for (const [name, request, status] of cases) {
      await given(nothing)
        .when(request)
        .then((res) => expect([name, res.status]).toEqual([name, status]));
    }
  });
});

describe('paths', () => {
  it('a PUT to a path on a fresh account creates the document and its parents (the mobile apps do this)', async () => {
    await given(nothing)
      .when(() => put(alice, `${P}/favorites/favorites/urn:show:1/date`, 1_700_000_000_000))
      .then(async (res) => {
        expect(res.status).toBe(201);
        expect(res.body).toBe(1_700_000_000_000);
        expect((await get(alice, `${P}/favorites`)).body).toEqual({ favorites: { 'urn:show:1': { date: 1_700_000_000_000 } } });
        expect((await get(alice, `${P}/favorites/favorites/urn:show:1/date`)).body).toBe(1_700_000_000_000);
        // Reads may use the leading-slash shape of the spec.
        expect((await get(alice, `${P}/favorites//favorites/urn:show:1`)).body).toEqual({ date: 1_700_000_000_000 });
      });
  });

  it('GET at a path answers the value, any JSON value, and 404 where nothing is', async () => {
    const document = () => put(alice, `${P}/s`, { list: [{ id: 'a' }, { id: 'b' }], flag: false, none: null, name: 'x' });
    await given(document)
      .when(() => get(alice, `${P}/s/list/1/id`))
      .then((res) => expect(res.body).toBe('b'));
    await given(nothing)
      .when(() => get(alice, `${P}/s/flag`))
      .then((res) => expect(res.text).toBe('false'));
    await given(nothing)
      .when(() => get(alice, `${P}/s/none`))
      .then((res) => expect(res.text).toBe('null'));
    for (const path of ['list/2', 'list/x', 'name/length', 'missing', 'constructor', '__proto__']) {
      await given(nothing)
        .when(() => get(alice, `${P}/s/${path}`))
        .then((res) => expect(res.status).toBe(404));
    }
    await given(nothing)
      .when(() => get(alice, `${P}/nothing/a`))
      .then((res) => expect(res.status).toBe(404));
  });

  it('ignores jsonpath when a path is present', async () => {
    await given(() => put(alice, `${P}/s`, { a: { b: 1 }, c: 2 }))
      .when(() => get(alice, `${P}/s/a?jsonpath=$.c`))
      .then((res) => expect(res.body).toEqual({ b: 1 }));
  });

  it('PUT at a path replaces, POST merges objects; both keep the rest', async () => {
    await given(() => put(alice, `${P}/s`, { player: { volume: 3, quality: 'hd' }, theme: 'dark' }))
      .when(() => put(alice, `${P}/s/player`, { volume: 5 }))
      .then(async (replaced) => {
        expect(replaced.body).toEqual({ volume: 5 });
        expect((await get(alice, `${P}/s`)).body).toEqual({ player: { volume: 5 }, theme: 'dark' });
      });

    await given(nothing)
      .when(() => post(alice, `${P}/s/player`, { payload: { quality: 'sd', subtitles: { lang: 'fr' } } }))
      .then((merged) => {
        expect(merged.status).toBe(200);
        expect(merged.body).toEqual({ volume: 5, quality: 'sd', subtitles: { lang: 'fr' } });
      });

    await given(nothing)
      .when(() => post(alice, `${P}/s/theme`, { payload: null }))
      .then(async (res) => {
        expect(res.body).toBeNull();
        expect((await get(alice, `${P}/s`)).body).toEqual({ player: { volume: 5, quality: 'sd', subtitles: { lang: 'fr' } }, theme: null });
      });
  });

  it('POST requires the payload key', async () => {
    await given(nothing)
      .when(() => post(alice, `${P}/s/a`, { value: 1 }))
      .then(async (res) => {
        expect(res.status).toBe(400);
        expect(fieldsOf(res)).toEqual(['payload']);
        expect((await get(alice, `${P}/s`)).status).toBe(404);
      });
  });

  it('writes array elements by index, appends at the length, and refuses out of range, names in arrays and scalars on the way', async () => {
    await given(() => put(alice, `${P}/s`, { list: [1, 2], name: 'x' }))
      .when(async () => [await put(alice, `${P}/s/list/0`, 'one'), await put(alice, `${P}/s/list/2`, 3)])
      .then(async ([replaced, appended]) => {
        expect(replaced.status).toBe(200);
        expect(appended.status).toBe(200);
        expect((await get(alice, `${P}/s/list`)).body).toEqual(['one', 2, 3]);
      });

    for (const path of ['list/9', 'list/x', 'list/-1', 'name/first', 'list/9/a']) {
      await given(nothing)
        .when(() => put(alice, `${P}/s/${path}`, 1))
        .then(async (res) => {
          expect(res.status).toBe(400);
          expect(fieldsOf(res)).toEqual(['path']);
          expect((await get(alice, `${P}/s`)).body).toEqual({ list: ['one', 2, 3], name: 'x' });
        });
    }
  });

  it('DELETE at a path removes that part (array elements are spliced) and 404s where nothing is', async () => {
    await given(() => put(alice, `${P}/s`, { a: { b: 1, c: 2 }, list: [1, 2, 3] }))
      .when(async () => [await del(alice, `${P}/s/a/b`), await del(alice, `${P}/s/list/0`)])
      .then(async (answers) => {
        expect(answers.map((a) => a.status)).toEqual([204, 204]);
        expect((await get(alice, `${P}/s`)).body).toEqual({ a: { c: 2 }, list: [2, 3] });
      });

    for (const path of [`${P}/s/a/zz`, `${P}/nothing/a`]) {
      await given(nothing)
        .when(() => del(alice, path))
        .then((res) => expect(res.status).toBe(404));
    }
  });

  it('refuses empty segments and empty keys with 400', async () => {
    for (const path of [`${P}/s/a//b`, `${P}/s/a/`]) {
      await given(nothing)
        .when(() => put(alice, path, 1))
        .then((res) => expect(fieldsOf(res)).toEqual(['path']));
    }
    await given(nothing)
      .when(() => put(alice, `${P}/`, { a: 1 }))
      .then((res) => expect(res.status).toBe(400));
    await given(nothing)
      .when(() => put(alice, `${P}//a`, 1))
      .then(async (emptyKey) => {
        expect(emptyKey.status).toBe(400);
        expect(fieldsOf(emptyKey)).toEqual(['key']);
        expect((await get(alice, P)).body).toEqual([]);
      });
  });
});

describe('JSONPath', () => {
  /** The document every test here starts from. */
  const document = () =>
    put(alice, `${P}/s`, { theme: 'dark', favorites: { 'urn:a': { date: 1 }, 'urn:b': { date: 2 } }, list: [10, 20, 30] });

  it('GET answers the value of a definite expression, the matches of any other, 404 when a definite one names nothing', async () => {
    const cases: Array<[string, unknown]> = [
      ['$.theme', 'dark'],
      ["$.favorites['urn:b'].date", 2],
      ['$..date', [1, 2]],
      ['$.list[1:]', [20, 30]],
      ['$..nothing', []],
    ];
    for (const [expression, value] of cases) {
      await given(document)
        .when(() => get(alice, jsonpath(expression)))
        .then((res) => expect(res.body).toEqual(value));
    }
    await given(document)
      .when(() => get(alice, jsonpath('$.nothing')))
      .then((res) => expect(res.status).toBe(404));
  });

  it('DELETE with jsonpath removes every match (partial deletion)', async () => {
    await given(document)
      .when(async () => [await del(alice, jsonpath('$..date')), await del(alice, jsonpath('$.list[0,2]'))])
      .then(async (answers) => {
        expect(answers.map((a) => a.status)).toEqual([204, 204]);
        expect((await get(alice, `${P}/s`)).body).toEqual({ theme: 'dark', favorites: { 'urn:a': {}, 'urn:b': {} }, list: [20] });
      });

    await given(nothing)
      .when(() => del(alice, jsonpath('$.nothing')))
      .then((res) => expect(res.status).toBe(204));
  });

  it('cannot run code: script injection is refused with 400, and the service keeps answering', async () => {
    const injections = [
      "$..[?(@.constructor.constructor('return process')().exit())]",
      "$[(@.constructor.constructor('return process')().exit())]",
    ];
    for (const expression of injections) {
      await given(document)
        .when(async () => [await get(alice, jsonpath(expression)), await del(alice, jsonpath(expression))])
        .then(async ([read, deleted]) => {
          expect(read.status).toBe(400);
          expect(fieldsOf(read)).toEqual(['jsonpath']);
          expect(deleted.status).toBe(400);
          expect((await get(alice, `${P}/s/theme`)).body).toBe('dark');
        });
    }
  });

  it('refuses a malformed expression or an RFC 9535 filter with 400 naming jsonpath, never a partial answer', async () => {
    await document();
    for (const expression of ['$[', '$[?@.a]', '$[?@.theme]', 'theme', '$.', '$..', "$['a", '$.a[1', '$]']) {
      await given(nothing)
        .when(async () => [await get(alice, jsonpath(expression)), await del(alice, jsonpath(expression))])
        .then((answers) => {
          for (const res of answers) {
            expect([expression, res.status]).toEqual([expression, 400]);
            expect(fieldsOf(res)).toEqual(['jsonpath']);
          }
        });
    }
    await given(nothing)
      .when(() => get(alice, jsonpath('$[?@.a]')))
      .then(async (filter) => {
        expect(filter.body.errors).toEqual([{ field: 'jsonpath', message: 'filter and script expressions are not supported' }]);
        expect((await get(alice, `${P}/s/theme`)).body).toBe('dark');
      });
  });

  it('refuses an empty or too long expression', async () => {
    for (const path of [`${P}/s?jsonpath=`, `${P}/s?jsonpath=${'$'.repeat(1025)}`]) {
      await given(document)
        .when(() => get(alice, path))
        .then((res) => expect(res.status).toBe(400));
    }
  });
});

describe('limits', () => {
  it('refuses a document past the size limit with 413 and stores nothing', async () => {
    await given(nothing)
      .when(() => put(alice, `${P}/s`, { text: 'x'.repeat(3000) }))
      .then(async (big) => {
        expect(big.status).toBe(413);
        expect((await get(alice, `${P}/s`)).status).toBe(404);
      });

    await given(() => put(alice, `${P}/s`, { text: 'x'.repeat(1000) }))
      .when(async () => [
        await put(alice, `${P}/s/more`, 'y'.repeat(1100)),
        await post(alice, `${P}/s/more`, { payload: 'y'.repeat(1100) }),
      ])
      .then(async (answers) => {
        expect(answers.map((a) => a.status)).toEqual([413, 413]);
        expect(Object.keys((await get(alice, `${P}/s`)).body)).toEqual(['text']);
      });
  });

  it('refuses a body past the request limit with 413', async () => {
    await given(nothing)
      .when(() => put(alice, `${P}/s`, { text: 'x'.repeat(70 * 1024) }))
      .then((res) => expect(res.status).toBe(413));
  });

  it('refuses a key past the length limit, a path past the depth limit and a too deeply nested document with 400', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 9; i++) deep = { d: deep };
    const cases: Array<[string, unknown, string]> = [
      [`${P}/${'k'.repeat(65)}`, { a: 1 }, 'key'],
      [`${P}/s/1/2/3/4/5/6/7/8/9`, 1, 'path'],
      [`${P}/s`, deep, 'body'],
      [`${P}/s/a/b`, { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } }, 'body'],
    ];
    for (const [path, body, field] of cases) {
      await given(nothing)
        .when(() => put(alice, path, body))
        .then(async (res) => {
          expect(fieldsOf(res)).toEqual([field]);
          expect((await get(alice, P)).body).toEqual([]);
        });
    }
  });

  it('refuses a pathologically deep body without a 500', async () => {
    await given(nothing)
      .when(() =>
        system.http
          .put(`${P}/s`)
          .set('authorization', alice)
          .set('content-type', 'application/json')
          .send(`{"a":${'['.repeat(30000)}${']'.repeat(30000)}}`),
      )
      .then((res) => expect(res.status).toBe(400));
  });
});

describe('identity and isolation', () => {
  it('answers 401 without credentials', async () => {
    await given(nothing)
      .when(() => system.http.get(P))
      .then((res) => expect(res.status).toBe(401));
    await given(nothing)
      .when(() => system.http.put(`${P}/s`).send({ a: 1 }))
      .then((res) => expect(res.status).toBe(401));
  });

  it('keeps users apart: another user sees 404 and an empty key list, and cannot change or delete', async () => {
    const alicesSecret = () => put(alice, `${P}/secret`, { a: 1 });
    await given(alicesSecret)
      .when(() => get(bob, P))
      .then((res) => expect(res.body).toEqual([]));
    for (const request of [
      () => get(bob, `${P}/secret`),
      () => get(bob, `${P}/secret/a`),
      () => del(bob, `${P}/secret`),
      () => del(bob, `${P}/secret/a`),
    ]) {
      await given(nothing)
        .when(request)
        .then((res) => expect(res.status).toBe(404));
    }
    await given(nothing)
      .when(() => put(bob, `${P}/secret/b`, 2))
      .then(async (res) => {
        expect(res.status).toBe(201);
        expect((await get(alice, `${P}/secret`)).body).toEqual({ a: 1 });
        expect((await get(bob, `${P}/secret`)).body).toEqual({ b: 2 });
      });
  });
});
