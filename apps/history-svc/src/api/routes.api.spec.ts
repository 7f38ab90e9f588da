import { T0, historySystemPerTest } from '../testing/history-system';

const s = historySystemPerTest({ maxBodyBytes: 64 * 1024 });

const post = (auth: string, body: unknown, path = '/api/history/v2') =>
  s.system.http
    .post(path)
    .set('authorization', auth)
    .send(body as object);
const get = (auth: string, path: string) => s.system.http.get(path).set('authorization', auth);
const itemIds = (res: { body: { data: Array<{ item_id: string }> } }) => res.body.data.map((i) => i.item_id);

describe('POST /api/history(/v2): add or update an item', () => {
  it('stores a new item and answers it, with a technical id and the server time when no date is sent', async () => {
    s.clock.now = T0 + 5;
    const res = await post(s.alice, { item_id: 'urn:a', last_playback_position: 12.5, device_id: 'ios', unknown_field: 'ignored' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ date: T0 + 5, deleted: false, device_id: 'ios', id: 1, item_id: 'urn:a', last_playback_position: 12.5 });
    const list = await get(s.alice, '/api/history/v2');
    expect(list.body).toEqual({ data: [res.body], last_update: T0 + 5, sync_token: '1', total: 1 });
  });

  it('serves one history under both paths', async () => {
    await post(s.alice, { item_id: 'urn:a', date: T0 }, '/api/history');
    await post(s.alice, { item_id: 'urn:b', date: T0 + 1 }, '/api/history/v2');
    expect(itemIds(await get(s.alice, '/api/history'))).toEqual(['urn:b', 'urn:a']);
    expect(itemIds(await get(s.alice, '/api/history/v2'))).toEqual(['urn:b', 'urn:a']);
  });

  it('keeps the newer entry when an older write arrives, and answers the stored one', async () => {
    await post(s.alice, { item_id: 'urn:a', date: T0 + 100, last_playback_position: 50 });
    const older = await post(s.alice, { item_id: 'urn:a', date: T0, last_playback_position: 1 });
    expect(older.status).toBe(200);
    expect(older.body).toMatchObject({ date: T0 + 100, last_playback_position: 50 });
    const newer = await post(s.alice, { item_id: 'urn:a', date: T0 + 200, last_playback_position: 60 });
    expect(newer.body).toMatchObject({ id: 1, date: T0 + 200, last_playback_position: 60 });
  });

  it('refuses bad input with a problem naming the field, and stores nothing', async () => {
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
      const res = await post(s.alice, body);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect((await get(s.alice, '/api/history/v2?with_deleted=true')).body.total).toBe(0);
  });

  it('refuses malformed JSON (400), another content type (415) and an oversized body (413)', async () => {
    const malformed = await s.system.http
      .post('/api/history/v2')
      .set('authorization', s.alice)
      .set('content-type', 'application/json')
      .send('{"item_id":');
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail).toMatch(/malformed JSON/);
    const text = await s.system.http.post('/api/history/v2').set('authorization', s.alice).set('content-type', 'text/plain').send('item');
    expect(text.status).toBe(415);
    const big = await post(s.alice, { item_id: 'a', device_id: 'x'.repeat(70 * 1024) });
    expect(big.status).toBe(413);
    expect(big.body.status).toBe(413);
  });
});

describe('POST /batch', () => {
  it('stores every item atomically and answers 204', async () => {
    const res = await post(
      s.alice,
      {
        data: [
          { item_id: 'a', date: T0 },
          { item_id: 'b', date: T0 + 1, last_playback_position: 3 },
        ],
      },
      '/api/history/v2/batch',
    );
    expect(res.status).toBe(204);
    expect(itemIds(await get(s.alice, '/api/history/v2'))).toEqual(['b', 'a']);
  });

  it('stores nothing when one item is invalid, naming it', async () => {
    const res = await post(s.alice, { data: [{ item_id: 'a' }, { item_id: 7 }] }, '/api/history/batch');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('data[1].item_id');
    expect((await get(s.alice, '/api/history')).body.total).toBe(0);
  });

  it('refuses a body without a data array', async () => {
    expect((await post(s.alice, { data: 'x' }, '/api/history/batch')).status).toBe(400);
    expect((await post(s.alice, {}, '/api/history/batch')).status).toBe(400);
  });
});

describe('GET /api/history(/v2): filters and paging', () => {
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
    const res = await get(s.alice, '/api/history/v2');
    expect(itemIds(res)).toEqual(['f', 'e', 'b', 'c', 'd', 'a']);
    expect(res.body.total).toBe(6);
    expect(res.body.last_update).toBe(T0 + 30);
    expect(res.body.next).toBeUndefined();
  });

  it('after is inclusive; before alone excludes every entry with that exact date', async () => {
    expect(itemIds(await get(s.alice, `/api/history/v2?after=${T0 + 10}`))).toEqual(['f', 'e', 'b', 'c', 'd']);
    expect(itemIds(await get(s.alice, `/api/history/v2?before=${T0 + 10}`))).toEqual(['a']);
    expect(itemIds(await get(s.alice, `/api/history/v2?after=${T0 + 10}&before=${T0 + 30}`))).toEqual(['e', 'b', 'c', 'd']);
  });

  it('before with before_item_id returns only the tied entries after that one, then older ones', async () => {
    expect(itemIds(await get(s.alice, `/api/history/v2?before=${T0 + 10}&before_item_id=b`))).toEqual(['c', 'd', 'a']);
    expect(itemIds(await get(s.alice, `/api/history/v2?before=${T0 + 10}&before_item_id=d`))).toEqual(['a']);
  });

  it('pages through next until it is absent, seeing every entry exactly once', async () => {
    const seen: string[] = [];
    let path = '/api/history/v2?limit=2';
    for (let page = 0; page < 10; page++) {
      const res = await get(s.alice, path);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(res.body.data.length);
      seen.push(...itemIds(res));
      if (!res.body.next) break;
      expect(res.body.next.startsWith('?')).toBe(true);
      path = `/api/history/v2${res.body.next}`;
    }
    expect(seen).toEqual(['f', 'e', 'b', 'c', 'd', 'a']);
  });

  it('keeps the other filters in next', async () => {
    const res = await get(s.alice, `/api/history/v2?limit=1&after=${T0 + 10}&with_deleted=false`);
    const next = new URLSearchParams(res.body.next);
    expect(Object.fromEntries(next)).toEqual({
      after: String(T0 + 10),
      limit: '1',
      with_deleted: 'false',
      before: String(T0 + 30),
      before_item_id: 'f',
    });
  });

  it('hides deleted entries unless with_deleted=true', async () => {
    s.clock.now = T0 + 50;
    expect((await s.system.http.delete('/api/history/v2/e').set('authorization', s.alice)).status).toBe(204);
    expect(itemIds(await get(s.alice, '/api/history/v2'))).toEqual(['f', 'b', 'c', 'd', 'a']);
    const all = await get(s.alice, '/api/history/v2?with_deleted=true');
    expect(all.body.data[0]).toMatchObject({ item_id: 'e', deleted: true, date: T0 + 50 });
    expect(all.body.last_update).toBe(T0 + 50);
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
      const res = await get(s.alice, `/api/history/v2?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
  });
});

describe('GET /positions', () => {
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
    expect((await get(s.alice, '/api/history/v2/positions')).body).toEqual({ a: 1.5, b: 2 });
    expect((await get(s.alice, '/api/history/positions?item_ids=a,zz')).body).toEqual({ a: 1.5 });
    expect((await get(s.alice, `/api/history/v2/positions?after=${T0 + 1}`)).body).toEqual({ b: 2 });
    expect((await get(s.alice, '/api/history/v2/positions?limit=1&item_ids=a,b')).body).toEqual({ b: 2 });
  });

  it('includes deleted items with return_missing=true or with_deleted=true', async () => {
    await s.system.http.delete('/api/history/v2/a').set('authorization', s.alice);
    expect((await get(s.alice, '/api/history/v2/positions')).body).toEqual({ b: 2 });
    expect((await get(s.alice, '/api/history/v2/positions?return_missing=true')).body).toEqual({ a: 1.5, b: 2 });
    expect((await get(s.alice, '/api/history/v2/positions?with_deleted=true')).body).toEqual({ a: 1.5, b: 2 });
  });
});

describe('DELETE', () => {
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
    expect((await s.system.http.delete('/api/history/v2/a').set('authorization', s.alice)).status).toBe(204);
    expect(itemIds(await get(s.alice, '/api/history/v2'))).toEqual(['b']);
    const unknown = await s.system.http.delete('/api/history/v2/zz').set('authorization', s.alice);
    expect(unknown.status).toBe(404);
    expect(unknown.body.title).toBe('Not Found');
  });

  it('deletes one item by technical id on the deprecated unversioned path', async () => {
    expect((await s.system.http.delete('/api/history/2').set('authorization', s.alice)).status).toBe(204);
    expect(itemIds(await get(s.alice, '/api/history'))).toEqual(['a']);
    expect((await s.system.http.delete('/api/history/99').set('authorization', s.alice)).status).toBe(404);
    const control = await s.system.http.delete('/api/history/v2/urn%00a').set('authorization', s.alice);
    expect(control.status).toBe(400);
    expect(control.body.errors[0].field).toBe('itemId');
    const bad = await s.system.http.delete('/api/history/abc').set('authorization', s.alice);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('id');
  });

  it('deletes the whole history as tombstones that syncing devices can see', async () => {
    s.clock.now = T0 + 99;
    expect((await s.system.http.delete('/api/history/v2').set('authorization', s.alice)).status).toBe(204);
    expect((await get(s.alice, '/api/history/v2')).body.total).toBe(0);
    const tombstones = await get(s.alice, `/api/history/v2?with_deleted=true&after=${T0 + 99}`);
    expect(tombstones.body.data.map((i: { item_id: string; deleted: boolean; date: number }) => [i.item_id, i.deleted, i.date])).toEqual([
      ['a', true, T0 + 99],
      ['b', true, T0 + 99],
    ]);
  });
});

describe('identity and isolation', () => {
  it('answers 401 without credentials or with a bad token', async () => {
    expect((await s.system.http.get('/api/history/v2')).status).toBe(401);
    expect((await s.system.http.get('/api/history/v2').set('authorization', 'Bearer not-a-jwt')).status).toBe(401);
    expect((await s.system.http.get('/api/history/v2').set('authorization', 'Basic abc')).status).toBe(401);
  });

  it('refuses an identity header sent by a client (400 naming it), with or without credentials', async () => {
    const res = await s.system.http.get('/api/history/v2').set('x-udp-identity', 'v1.YWxpY2U.9999999999999.forged');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('x-udp-identity');
    expect((await get(s.alice, '/api/history/v2').set('x-udp-identity', 'v1.Ym9i.9999999999999.forged')).status).toBe(400);
  });

  it('keeps users apart: another user sees nothing and cannot delete', async () => {
    await post(s.alice, { item_id: 'secret', date: T0 });
    expect((await get(s.bob, '/api/history/v2?with_deleted=true')).body.total).toBe(0);
    expect((await get(s.bob, '/api/history/v2/positions?return_missing=true')).body).toEqual({});
    expect((await s.system.http.delete('/api/history/v2/secret').set('authorization', s.bob)).status).toBe(404);
    expect((await s.system.http.delete('/api/history/1').set('authorization', s.bob)).status).toBe(404);
    await s.system.http.delete('/api/history/v2').set('authorization', s.bob);
    expect(itemIds(await get(s.alice, '/api/history/v2'))).toEqual(['secret']);
  });

  it('answers unknown paths with a 404 problem', async () => {
    const res = await get(s.alice, '/api/history/v2/positions/extra');
    expect(res.status).toBe(404);
    expect((await get(s.alice, '/api/nothing')).status).toBe(404);
  });
});
