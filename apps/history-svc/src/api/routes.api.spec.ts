import { given } from '@udp/test-kit';
import { T0, historySystemPerTest } from '../testing/history-system';

const s = historySystemPerTest({ maxBodyBytes: 64 * 1024 });

const post = (auth: string, body: unknown, path = '/api/history/v2') =>
  s.system.http
    .post(path)
    .set('authorization', auth)
    .send(body as object);
const get = (auth: string, path: string) => s.system.http.get(path).set('authorization', auth);
const del = (auth: string, path: string) => s.system.http.delete(path).set('authorization', auth);
const itemIds = (res: { body: { data: Array<{ item_id: string }> } }) => res.body.data.map((i) => i.item_id);
const nothing = () => undefined;

describe('POST /api/history(/v2): add or update an item', () => {
  it('stores a new item and answers it, with a technical id and the server time when no date is sent', async () => {
    await given(() => {
      s.clock.now = T0 + 5;
    })
      .when(() => post(s.alice, { item_id: 'urn:a', last_playback_position: 12.5, device_id: 'ios', unknown_field: 'ignored' }))
      .then(async (res) => {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ date: T0 + 5, deleted: false, device_id: 'ios', id: 1, item_id: 'urn:a', last_playback_position: 12.5 });
        const list = await get(s.alice, '/api/history/v2');
        expect(list.body).toEqual({ data: [res.body], last_update: T0 + 5, sync_token: '1', total: 1 });
      });
  });

  it('serves one history under both paths', async () => {
    await given(async () => {
      await post(s.alice, { item_id: 'urn:a', date: T0 }, '/api/history');
      await post(s.alice, { item_id: 'urn:b', date: T0 + 1 }, '/api/history/v2');
    })
      .when(async () => [await get(s.alice, '/api/history'), await get(s.alice, '/api/history/v2')])
      .then(([unversioned, v2]) => {
        expect(itemIds(unversioned)).toEqual(['urn:b', 'urn:a']);
        expect(itemIds(v2)).toEqual(['urn:b', 'urn:a']);
      });
  });

  it('keeps the newer entry when an older write arrives, and answers the stored one', async () => {
    await given(() => post(s.alice, { item_id: 'urn:a', date: T0 + 100, last_playback_position: 50 }))
      .when(() => post(s.alice, { item_id: 'urn:a', date: T0, last_playback_position: 1 }))
      .then((older) => {
        expect(older.status).toBe(200);
        expect(older.body).toMatchObject({ date: T0 + 100, last_playback_position: 50 });
      });
    await given(nothing)
      .when(() => post(s.alice, { item_id: 'urn:a', date: T0 + 200, last_playback_position: 60 }))
      .then((newer) => expect(newer.body).toMatchObject({ id: 1, date: T0 + 200, last_playback_position: 60 }));
  });

  it('refuses bad input with a problem naming the field, and stores nothing', async () => {
    /** Alice's empty history: what every refused request must leave. */
    const emptyHistory = async () => expect((await get(s.alice, '/api/history/v2?with_deleted=true')).body.total).toBe(0);
    const cases: Array<[unknown, string]> = [
      [{ item_id: 5 }, 'item_id'],
      [{}, 'item_id'],
      [{ item_id: '' }, 'item_id'],
      [{ item_id: 'urn:a\u0000' }, 'item_id'],
      [{ item_id: 'urn:\u001fa' }, 'item_id'],
      [{ item_id: 'urn:a\u007f' }, 'item_id'],
      [{ item_id: 'a', date: -1 }, 'date'],
      [{ item_id: 'a', date: 1.5 }, 'date'],
      [{ item_id: 'a', last_playback_position: 'x' }, 'last_playback_position'],
      [{ item_id: 'a', deleted: 'yes' }, 'deleted'],
      [[{ item_id: 'a' }], 'body'],
    ];
    for (const [body, field] of cases) {
      await given(emptyHistory)
        .when(() => post(s.alice, body))
        .then(async (res) => {
          expect(res.status).toBe(400);
          expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
          expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
          await emptyHistory();
        });
    }
  });

  it('refuses malformed JSON (400), another content type (415) and an oversized body (413)', async () => {
    await given(nothing)
      .when(() =>
        s.system.http.post('/api/history/v2').set('authorization', s.alice).set('content-type', 'application/json').send('{"item_id":'),
      )
      .then((malformed) => {
        expect(malformed.status).toBe(400);
        expect(malformed.body.detail).toMatch(/malformed JSON/);
      });
    await given(nothing)
      .when(() => s.system.http.post('/api/history/v2').set('authorization', s.alice).set('content-type', 'text/plain').send('item'))
      .then((text) => expect(text.status).toBe(415));
    await given(nothing)
      .when(() => post(s.alice, { item_id: 'a', device_id: 'x'.repeat(70 * 1024) }))
      .then((big) => {
        expect(big.status).toBe(413);
        expect(big.body.status).toBe(413);
      });
  });
});

describe('POST /batch', () => {
  it('stores every item atomically and answers 204', async () => {
    await given(nothing)
      .when(() =>
        post(
          s.alice,
          {
            data: [
              { item_id: 'a', date: T0 },
              { item_id: 'b', date: T0 + 1, last_playback_position: 3 },
            ],
          },
          '/api/history/v2/batch',
        ),
      )
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(itemIds(await get(s.alice, '/api/history/v2'))).toEqual(['b', 'a']);
      });
  });

  it('stores nothing when one item is invalid, naming it', async () => {
    await given(nothing)
      .when(() => post(s.alice, { data: [{ item_id: 'a' }, { item_id: 7 }] }, '/api/history/batch'))
      .then(async (res) => {
        expect(res.status).toBe(400);
        expect(res.body.errors[0].field).toBe('data[1].item_id');
        expect((await get(s.alice, '/api/history')).body.total).toBe(0);
      });
  });

  it('refuses a body without a data array', async () => {
    for (const body of [{ data: 'x' }, {}]) {
      await given(nothing)
        .when(() => post(s.alice, body, '/api/history/batch'))
        .then((res) => expect(res.status).toBe(400));
    }
  });
});

describe('GET /api/history(/v2): filters and paging', () => {
  /** Alice's history of a (T0), b, c, d (all three T0+10), e (T0+20) and f (T0+30): the state every test here starts from. */
  beforeEach(async () => {
    // Three entries share the date T0+10 (b, c, d); order is date desc, then item id.
    const data = [
      ['a', 0],
      ['b', 10],
      ['c', 10],
      ['d', 10],
      ['e', 20],
      ['f', 30],
    ].map(([id, d]) => ({ item_id: id, date: T0 + (d as number) }));
    await post(s.alice, { data }, '/api/history/batch');
  });

  it('lists newest first with ties in item-id order; total is the number returned', async () => {
    await given(nothing)
      .when(() => get(s.alice, '/api/history/v2'))
      .then((res) => {
        expect(itemIds(res)).toEqual(['f', 'e', 'b', 'c', 'd', 'a']);
        expect(res.body.total).toBe(6);
        expect(res.body.last_update).toBe(T0 + 30);
        expect(res.body.next).toBeUndefined();
      });
  });

  it('after is inclusive; before alone excludes every entry with that exact date', async () => {
    for (const [query, expected] of [
      [`after=${T0 + 10}`, ['f', 'e', 'b', 'c', 'd']],
      [`before=${T0 + 10}`, ['a']],
      [`after=${T0 + 10}&before=${T0 + 30}`, ['e', 'b', 'c', 'd']],
    ] as const) {
      await given(nothing)
        .when(() => get(s.alice, `/api/history/v2?${query}`))
        .then((res) => expect(itemIds(res)).toEqual(expected));
    }
  });

  it('before with before_item_id returns only the tied entries after that one, then older ones', async () => {
    for (const [query, expected] of [
      [`before=${T0 + 10}&before_item_id=b`, ['c', 'd', 'a']],
      [`before=${T0 + 10}&before_item_id=d`, ['a']],
    ] as const) {
      await given(nothing)
        .when(() => get(s.alice, `/api/history/v2?${query}`))
        .then((res) => expect(itemIds(res)).toEqual(expected));
    }
  });

  it('pages through next until it is absent, seeing every entry exactly once', async () => {
    /** Follows next from the first page of two (at most 10 pages): every page read. */
    const walk = async () => {
      const pages = [];
      let path = '/api/history/v2?limit=2';
      for (let page = 0; page < 10; page++) {
        const res = await get(s.alice, path);
        pages.push(res);
        if (!res.body.next) break;
        path = `/api/history/v2${res.body.next}`;
      }
      return pages;
    };
    await given(nothing)
      .when(walk)
      .then((pages) => {
        for (const res of pages) {
          expect(res.status).toBe(200);
          expect(res.body.total).toBe(res.body.data.length);
          if (res.body.next) expect(res.body.next.startsWith('?')).toBe(true);
        }
        expect(pages.flatMap(itemIds)).toEqual(['f', 'e', 'b', 'c', 'd', 'a']);
      });
  });

  it('keeps the other filters in next', async () => {
    await given(nothing)
      .when(() => get(s.alice, `/api/history/v2?limit=1&after=${T0 + 10}&with_deleted=false`))
      .then((res) => {
        const next = new URLSearchParams(res.body.next);
        expect(Object.fromEntries(next)).toEqual({
          after: String(T0 + 10),
          limit: '1',
          with_deleted: 'false',
          before: String(T0 + 30),
          before_item_id: 'f',
        });
      });
  });

  it('hides deleted entries unless with_deleted=true', async () => {
    await given(async () => {
      s.clock.now = T0 + 50;
      expect((await del(s.alice, '/api/history/v2/e')).status).toBe(204);
    })
      .when(async () => [await get(s.alice, '/api/history/v2'), await get(s.alice, '/api/history/v2?with_deleted=true')])
      .then(([visible, all]) => {
        expect(itemIds(visible)).toEqual(['f', 'b', 'c', 'd', 'a']);
        expect(all.body.data[0]).toMatchObject({ item_id: 'e', deleted: true, date: T0 + 50 });
        expect(all.body.last_update).toBe(T0 + 50);
      });
  });

  it('refuses invalid query values naming the parameter', async () => {
    for (const [query, field] of [
      ['limit=-1', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=100000', 'limit'],
      ['after=-5', 'after'],
      ['before=1e3', 'before'],
      ['with_deleted=maybe', 'with_deleted'],
      ['before=1&before_item_id=a%0Ab', 'before_item_id'],
      ['since=x', 'since'],
    ]) {
      await given(nothing)
        .when(() => get(s.alice, `/api/history/v2?${query}`))
        .then((res) => {
          expect(res.status).toBe(400);
          expect(res.body.errors[0].field).toBe(field);
        });
    }
  });
});

describe('GET /positions', () => {
  /** Alice's history of a (position 1.5), b (position 2) and c (no position): the state every test here starts from. */
  beforeEach(async () => {
    await post(
      s.alice,
      {
        data: [
          { item_id: 'a', date: T0, last_playback_position: 1.5 },
          { item_id: 'b', date: T0 + 1, last_playback_position: 2 },
          { item_id: 'c', date: T0 + 2 },
        ],
      },
      '/api/history/batch',
    );
  });

  it('maps item ids to their last position', async () => {
    for (const [path, expected] of [
      ['/api/history/v2/positions', { a: 1.5, b: 2 }],
      ['/api/history/positions?item_ids=a,zz', { a: 1.5 }],
      [`/api/history/v2/positions?after=${T0 + 1}`, { b: 2 }],
      ['/api/history/v2/positions?limit=1&item_ids=a,b', { b: 2 }],
    ] as const) {
      await given(nothing)
        .when(() => get(s.alice, path))
        .then((res) => expect(res.body).toEqual(expected));
    }
  });

  it('includes deleted items with return_missing=true or with_deleted=true', async () => {
    await given(() => del(s.alice, '/api/history/v2/a'))
      .when(() => get(s.alice, '/api/history/v2/positions'))
      .then((res) => expect(res.body).toEqual({ b: 2 }));
    for (const query of ['return_missing=true', 'with_deleted=true']) {
      await given(nothing)
        .when(() => get(s.alice, `/api/history/v2/positions?${query}`))
        .then((res) => expect(res.body).toEqual({ a: 1.5, b: 2 }));
    }
  });
});

describe('DELETE', () => {
  /** Alice's history of a (technical id 1) and b (technical id 2): the state every test here starts from. */
  beforeEach(async () => {
    await post(
      s.alice,
      {
        data: [
          { item_id: 'a', date: T0 },
          { item_id: 'b', date: T0 + 1 },
        ],
      },
      '/api/history/batch',
    );
  });

  it('deletes one item by business id (v2) and 404s an unknown one', async () => {
    await given(nothing)
      .when(() => del(s.alice, '/api/history/v2/a'))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(itemIds(await get(s.alice, '/api/history/v2'))).toEqual(['b']);
      });
    await given(nothing)
      .when(() => del(s.alice, '/api/history/v2/zz'))
      .then((unknown) => {
        expect(unknown.status).toBe(404);
        expect(unknown.body.title).toBe('Not Found');
      });
  });

  it('deletes one item by technical id on the deprecated unversioned path', async () => {
    await given(nothing)
      .when(() => del(s.alice, '/api/history/2'))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect(itemIds(await get(s.alice, '/api/history'))).toEqual(['a']);
      });
    await given(nothing)
      .when(() => del(s.alice, '/api/history/99'))
      .then((res) => expect(res.status).toBe(404));
    await given(nothing)
      .when(() => del(s.alice, '/api/history/v2/urn%00a'))
      .then((control) => {
        expect(control.status).toBe(400);
        expect(control.body.errors[0].field).toBe('itemId');
      });
    await given(nothing)
      .when(() => del(s.alice, '/api/history/abc'))
      .then((bad) => {
        expect(bad.status).toBe(400);
        expect(bad.body.errors[0].field).toBe('id');
      });
  });

  it('deletes the whole history as tombstones that syncing devices can see', async () => {
    await given(() => {
      s.clock.now = T0 + 99;
    })
      .when(() => del(s.alice, '/api/history/v2'))
      .then(async (res) => {
        expect(res.status).toBe(204);
        expect((await get(s.alice, '/api/history/v2')).body.total).toBe(0);
        const tombstones = await get(s.alice, `/api/history/v2?with_deleted=true&after=${T0 + 99}`);
        expect(
          tombstones.body.data.map((i: { item_id: string; deleted: boolean; date: number }) => [i.item_id, i.deleted, i.date]),
        ).toEqual([
          ['a', true, T0 + 99],
          ['b', true, T0 + 99],
        ]);
      });
  });
});

describe('identity and isolation', () => {
  it('answers 401 without credentials or with a bad token', async () => {
    for (const request of [
      () => s.system.http.get('/api/history/v2'),
      () => s.system.http.get('/api/history/v2').set('authorization', 'Bearer not-a-jwt'),
      () => s.system.http.get('/api/history/v2').set('authorization', 'Basic abc'),
    ]) {
      await given(nothing)
        .when(request)
        .then((res) => expect(res.status).toBe(401));
    }
  });

  it('refuses an identity header sent by a client (400 naming it), with or without credentials', async () => {
    await given(nothing)
      .when(() => s.system.http.get('/api/history/v2').set('x-udp-identity', 'v1.YWxpY2U.9999999999999.forged'))
      .then((res) => {
        expect(res.status).toBe(400);
        expect(res.body.errors[0].field).toBe('x-udp-identity');
      });
    await given(nothing)
      .when(() => get(s.alice, '/api/history/v2').set('x-udp-identity', 'v1.Ym9i.9999999999999.forged'))
      .then((res) => expect(res.status).toBe(400));
  });

  it('keeps users apart: another user sees nothing and cannot delete', async () => {
    await given(() => post(s.alice, { item_id: 'secret', date: T0 }))
      .when(() => get(s.bob, '/api/history/v2?with_deleted=true'))
      .then((res) => expect(res.body.total).toBe(0));
    await given(nothing)
      .when(() => get(s.bob, '/api/history/v2/positions?return_missing=true'))
      .then((res) => expect(res.body).toEqual({}));
    for (const path of ['/api/history/v2/secret', '/api/history/1']) {
      await given(nothing)
        .when(() => del(s.bob, path))
        .then((res) => expect(res.status).toBe(404));
    }
    await given(nothing)
      .when(() => del(s.bob, '/api/history/v2'))
      .then(async () => expect(itemIds(await get(s.alice, '/api/history/v2'))).toEqual(['secret']));
  });

  it('answers unknown paths with a 404 problem', async () => {
    await given(nothing)
      .when(() => get(s.alice, '/api/history/v2/positions/extra'))
      .then((res) => expect(res.status).toBe(404));
    await given(nothing)
      .when(() => get(s.alice, '/api/nothing'))
      .then((res) => expect(res.status).toBe(404));
  });
});
