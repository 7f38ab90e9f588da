import { given } from '@udp/test-kit';
import { T0, historySystemPerTest } from '../testing/history-system';

/** Change-based sync (issue 9, item 5): `since=<sync_token>` never misses a change, whatever date a client sent. */
const s = historySystemPerTest();

interface Entry {
  item_id: string;
  date: number;
  deleted: boolean;
  last_playback_position?: number;
}
interface HistoryAnswer {
  data: Entry[];
  last_update: number;
  next?: string;
  sync_token: string;
  total: number;
}

const post = (auth: string, body: unknown, path = '/api/history/v2') =>
  s.system.http
    .post(path)
    .set('authorization', auth)
    .send(body as object);
const list = async (auth: string, query: string): Promise<HistoryAnswer> => {
  const res = await s.system.http.get(`/api/history/v2${query}`).set('authorization', auth);
  expect(res.status).toBe(200);
  return res.body as HistoryAnswer;
};
const deleteAll = () => s.system.http.delete('/api/history/v2').set('authorization', s.alice).expect(204);
/** Follows `next` to the end; answers every entry seen and the token to keep. */
const syncAll = async (auth: string, query: string) => {
  const seen: Entry[] = [];
  let answer = await list(auth, query);
  seen.push(...answer.data);
  for (let page = 0; answer.next && page < 100; page++) {
    answer = await list(auth, answer.next);
    seen.push(...answer.data);
  }
  expect(answer.next).toBeUndefined();
  return { seen, token: answer.sync_token, last_update: answer.last_update };
};
const nothing = () => undefined;

describe('two devices of one user', () => {
  it('device B syncing with since sees a play device A uploads later with an older date; after=<last_update> misses it', async () => {
    await given(async () => {
      // Both devices are in sync after two plays.
      s.clock.now = T0 + 1000;
      await post(s.alice, { item_id: 'urn:show:1', date: T0 + 900, device_id: 'B' });
      await post(s.alice, { item_id: 'urn:show:2', date: T0 + 1000, device_id: 'B' });
      const b = await syncAll(s.alice, '?since=0');
      expect(b.seen.map((e) => e.item_id)).toEqual(['urn:show:1', 'urn:show:2']);
      expect(b.last_update).toBe(T0 + 1000);

      // Device A was offline and uploads a play from before those, with the date it was made.
      s.clock.now = T0 + 5000;
      expect(
        (await post(s.alice, { item_id: 'urn:show:offline', date: T0 + 100, device_id: 'A', last_playback_position: 42 })).status,
      ).toBe(200);
      return b;
    })
      .when(async (b) => ({
        byDate: await list(s.alice, `?after=${b.last_update}&with_deleted=true`),
        bySince: await syncAll(s.alice, `?since=${encodeURIComponent(b.token)}`),
      }))
      .then(async ({ byDate, bySince }, b) => {
        // The date-based sync cannot see it: its date is older than the last update device B knew.
        expect(byDate.data.map((e) => e.item_id)).not.toContain('urn:show:offline');

        // The change-based sync does, and only it.
        expect(bySince.seen).toEqual([
          { item_id: 'urn:show:offline', date: T0 + 100, deleted: false, device_id: 'A', id: 3, last_playback_position: 42 },
        ]);
        expect(bySince.token).not.toBe(b.token);

        // Nothing changed since: an empty answer that keeps the token.
        const again = await list(s.alice, `?since=${encodeURIComponent(bySince.token)}`);
        expect(again).toMatchObject({ data: [], total: 0, sync_token: bySince.token });
      });
  });

  it('includes tombstones of deletions and of delete-all, with or without with_deleted', async () => {
    /** The token the device kept from its sync after the deletion. */
    let keptAfterDelete = '';
    await given(async () => {
      await post(
        s.alice,
        {
          data: [
            { item_id: 'a', date: T0 },
            { item_id: 'b', date: T0 + 1 },
            { item_id: 'c', date: T0 + 2 },
          ],
        },
        '/api/history/batch',
      );
      const { token } = await syncAll(s.alice, '?since=0');
      s.clock.now = T0 + 10;
      await s.system.http.delete('/api/history/v2/b').set('authorization', s.alice).expect(204);
      return token;
    })
      .when((token) => syncAll(s.alice, `?since=${token}`))
      .then((afterDelete) => {
        expect(afterDelete.seen).toEqual([expect.objectContaining({ item_id: 'b', deleted: true, date: T0 + 10 })]);
        keptAfterDelete = afterDelete.token;
      });

    await given(async () => {
      s.clock.now = T0 + 20;
      await deleteAll();
    })
      .when(() => syncAll(s.alice, `?since=${keptAfterDelete}&with_deleted=true`))
      .then(async (afterClear) => {
        expect(afterClear.seen.map((e) => [e.item_id, e.deleted])).toEqual([
          ['a', true],
          ['c', true],
        ]);
        // with_deleted=false narrows a since query to live entries.
        expect((await list(s.alice, `?since=${keptAfterDelete}&with_deleted=false`)).data).toEqual([]);
      });
  });

  it('an older write that changes nothing is no change: since answers nothing new', async () => {
    await given(async () => {
      await post(s.alice, { item_id: 'a', date: T0 + 100 });
      const { token } = await syncAll(s.alice, '?since=0');
      await post(s.alice, { item_id: 'a', date: T0 });
      return token;
    })
      .when((token) => list(s.alice, `?since=${token}`))
      .then((answer) => expect(answer.data).toEqual([]));
  });
});

describe('paging in change order', () => {
  it('next carries since on, pages never split or repeat, even inside one delete-all', async () => {
    await given(async () => {
      await post(s.alice, { data: ['a', 'b', 'c', 'd', 'e'].map((id, i) => ({ item_id: id, date: T0 + 10 - i })) }, '/api/history/batch');
      s.clock.now = T0 + 50;
      await deleteAll();
      await post(s.alice, { item_id: 'f', date: T0 });
    })
      .when(() => list(s.alice, '?since=0&limit=2'))
      .then((first) => {
        expect(first.data.map((e) => e.item_id)).toEqual(['a', 'b']);
        const next = new URLSearchParams(first.next);
        expect(next.get('since')).toBe(first.sync_token);
        expect(next.get('limit')).toBe('2');
      });

    await given(nothing)
      .when(() => syncAll(s.alice, '?since=0&limit=2'))
      .then(async (all) => {
        // The five items were changed last by one event (the delete-all); f after it.
        expect(all.seen.map((e) => [e.item_id, e.deleted])).toEqual([
          ['a', true],
          ['b', true],
          ['c', true],
          ['d', true],
          ['e', true],
          ['f', false],
        ]);
        const full = await list(s.alice, '?since=0');
        expect(all.token).toBe(full.sync_token);
      });
  });

  it('a token kept from the first page of a date-ordered listing misses nothing written while paging', async () => {
    await given(async () => {
      await post(s.alice, { data: ['a', 'b', 'c'].map((id, i) => ({ item_id: id, date: T0 + i })) }, '/api/history/batch');
      const first = await list(s.alice, '?limit=1&with_deleted=true');
      expect(first.next).toBeDefined();
      await post(s.alice, { item_id: 'late', date: T0 + 99 });
      return first.sync_token;
    })
      .when((token) => list(s.alice, `?since=${token}`))
      .then((answer) => expect(answer.data.map((e) => e.item_id)).toEqual(['late']));
  });

  it('limit=0 answers no entries, only the position to sync from', async () => {
    await given(() => post(s.alice, { item_id: 'a', date: T0 }))
      .when(() => list(s.alice, '?limit=0'))
      .then((probe) => expect(probe).toEqual({ data: [], last_update: T0, sync_token: '1', total: 0 }));
    await given(nothing)
      .when(() => list(s.alice, '?since=0&limit=0'))
      .then((probe) => expect(probe).toEqual({ data: [], last_update: T0, sync_token: '1', total: 0 }));
  });
});

describe('tokens', () => {
  it('refuses a malformed since with a 400 naming since', async () => {
    for (const bad of ['abc', '-1', '1.', '1.a+b', '', '1e3', ' 1']) {
      await given(nothing)
        .when(() => s.system.http.get(`/api/history/v2?since=${encodeURIComponent(bad)}`).set('authorization', s.alice))
        .then((res) => {
          expect(res.status).toBe(400);
          expect(res.body.errors[0].field).toBe('since');
        });
    }
  });

  it('a token past the head (not of this change order) starts from the beginning', async () => {
    await given(() => post(s.alice, { item_id: 'a', date: T0 }))
      .when(() => list(s.alice, '?since=999'))
      .then((answer) => expect(answer.data.map((e) => e.item_id)).toEqual(['a']));
  });

  it("one user's token shows nothing of another's history", async () => {
    await given(async () => {
      await post(s.alice, { item_id: 'alice-secret', date: T0 });
      return (await list(s.alice, '?since=0')).sync_token;
    })
      .when(async (aliceToken) => [await list(s.bob, '?since=0'), await list(s.bob, `?since=${aliceToken}`)])
      .then(([fromStart, fromAlicesToken]) => {
        expect(fromStart.data).toEqual([]);
        expect(fromAlicesToken.data).toEqual([]);
      });
  });
});

describe('positions', () => {
  it('answer the sync token in a header and take since', async () => {
    const positions = (path: string) => s.system.http.get(path).set('authorization', s.alice);
    await given(() =>
      post(
        s.alice,
        {
          data: [
            { item_id: 'a', date: T0, last_playback_position: 1 },
            { item_id: 'b', date: T0 + 1, last_playback_position: 2 },
          ],
        },
        '/api/history/batch',
      ),
    )
      .when(() => positions('/api/history/v2/positions'))
      .then((all) => {
        expect(all.body).toEqual({ a: 1, b: 2 });
        expect(all.headers['sync-token']).toBe('2');
      });

    await given(async () => {
      const token = (await positions('/api/history/v2/positions')).headers['sync-token'];
      await post(s.alice, { item_id: 'a', date: T0 - 5, last_playback_position: 7 }); // older: changes nothing
      await post(s.alice, { item_id: 'offline', date: T0 - 50, last_playback_position: 3 });
      return token;
    })
      .when((token) => positions(`/api/history/positions?since=${token}`))
      .then((changed) => {
        expect(changed.body).toEqual({ offline: 3 });
        expect(changed.headers['sync-token']).toBe('3');
      });
  });
});
