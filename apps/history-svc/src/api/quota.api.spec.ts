import { given } from '@udp/test-kit';
import { historySystemPerTest } from '../testing/history-system';

/**
 * Issue 18: a user could store any number of history entries. HISTORY_MAX_ENTRIES (100,000 by default; 3 here)
 * bounds them, tombstones included; past it a write of new items is a 422 naming the setting, and nothing is stored.
 */
const s = historySystemPerTest({ maxEntries: 3 });
const V2 = '/api/history/v2';
const post = (path: string, body: unknown) =>
  s.system.http.post(path).set('authorization', s.alice).set('content-type', 'application/json').send(JSON.stringify(body));
const itemIds = async () =>
  ((await s.system.http.get(`${V2}?with_deleted=true`).set('authorization', s.alice)).body.data as Array<{ item_id: string }>)
    .map((i) => i.item_id)
    .sort();
const nothing = () => undefined;

describe('given a history with three entries, one of them deleted', () => {
  beforeEach(async () => {
    expect((await post(`${V2}/batch`, { data: [{ item_id: 'a' }, { item_id: 'b' }, { item_id: 'c' }] })).status).toBe(204);
    expect((await s.system.http.delete(`${V2}/c`).set('authorization', s.alice)).status).toBe(204);
  });

  it('when a new item is posted, alone or in a batch, then 422 names HISTORY_MAX_ENTRIES and nothing is stored', async () => {
    for (const [path, body] of [
      [V2, { item_id: 'd' }],
      [`${V2}/batch`, { data: [{ item_id: 'a' }, { item_id: 'd' }] }],
    ] as const) {
      await given(nothing)
        .when(() => post(path, body))
        .then(async (res) => {
          expect(res.status).toBe(422);
          expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
          expect(res.body).toMatchObject({ title: 'Quota Exceeded', limit: 'HISTORY_MAX_ENTRIES', max: 3 });
          expect(res.body.detail).toMatch(
            /at most 3 entries, deleted ones included \(HISTORY_MAX_ENTRIES\); this one has 3 and this write adds 1/,
          );
          expect(await itemIds()).toEqual(['a', 'b', 'c']);
        });
    }
  });

  it('when a stored item is posted again, deleted or not, then it is accepted; another user has his own quota', async () => {
    for (const body of [{ item_id: 'a', last_playback_position: 5 }, { item_id: 'c' }]) {
      await given(nothing)
        .when(() => post(V2, body))
        .then((res) => expect(res.status).toBe(200));
    }
    await given(nothing)
      .when(() =>
        s.system.http
          .post(V2)
          .set('authorization', s.bob)
          .set('content-type', 'application/json')
          .send(JSON.stringify({ item_id: 'd' })),
      )
      .then((bob) => expect(bob.status).toBe(200));
  });
});
