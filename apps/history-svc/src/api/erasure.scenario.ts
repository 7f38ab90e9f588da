import { randomUUID } from 'node:crypto';
import { type ErasureBackends, bytesFoundUnder, distinctiveUserId, eraseUserOnBus, erasureFixture } from '@udp/test-system';
import { createHistoryService } from '../app';
import { HistoryAnswers } from '../projections/answer-cache';

/**
 * User-data erasure (issue 10): a request on the bus, then history-svc knows nothing of the user. Run on
 * memory read models and the in-process bus (erasure.api.spec.ts) and on MongoDB and Kafka (erasure.int.spec.ts).
 */
export function historyErasureSuite(kind: string, openBackends: () => Promise<ErasureBackends>) {
  const T0 = 1_700_000_000_000;
  // Distinctive ids, so that a scan of the raw SQLite bytes finds them if anything is left.
  const erasee = distinctiveUserId('erasee');
  const keeper = distinctiveUserId('keeper');
  const itemsOf = (user: string) => Array.from({ length: 30 }, (_, i) => `urn:${user}:item${i}`);

  // The answers history-svc keeps in memory (a list asked again, unchanged, is not read again): looked into below.
  let kept = new HistoryAnswers(8 * 1024 * 1024);
  const f = erasureFixture(
    'history-svc',
    {
      prefixes: ['/api/history'],
      create: (deps) => createHistoryService({ ...deps, now: () => T0, answerCache: (kept = new HistoryAnswers(8 * 1024 * 1024)) }),
    },
    openBackends,
  );

  /** Every read endpoint of history-svc, with queries that include deleted entries and positions. */
  const READS = [
    '/api/history/v2',
    '/api/history',
    '/api/history/v2?with_deleted=true',
    '/api/history?with_deleted=true&limit=5',
    '/api/history/v2/positions',
    `/api/history/v2/positions?return_missing=true&item_ids=${encodeURIComponent(itemsOf(erasee).slice(0, 3).join(','))}`,
  ];
  const answers = async (user: string) => {
    const client = await f.as(user);
    return Promise.all(
      READS.map(async (path) => {
        const res = await client.get(path);
        return { path, status: res.status, body: res.body as unknown };
      }),
    );
  };

  async function fillHistory(user: string) {
    const client = await f.as(user);
    const items = itemsOf(user);
    expect(
      (
        await client.post('/api/history/v2/batch', {
          data: items.slice(0, 20).map((item_id, i) => ({ item_id, date: T0 - i, last_playback_position: i, device_id: `${user}-device` })),
        })
      ).status,
    ).toBe(204);
    for (const item_id of items.slice(20))
      expect((await client.post('/api/history/v2', { item_id, last_playback_position: 1.5 })).status).toBe(200);
    expect((await client.delete(`/api/history/v2/${encodeURIComponent(items[0])}`)).status).toBe(204);
  }

  describe(`erasure of a user in history-svc (${kind})`, () => {
    it('answers every endpoint for the erased user as for a new one, keeps the others, and leaves no byte of the user on disk', async () => {
      await fillHistory(erasee);
      await fillHistory(keeper);
      const keeperBefore = await answers(keeper);
      const newUser = await answers(`newcomer${randomUUID()}`);
      expect((await answers(erasee))[0].body).not.toEqual(newUser[0].body);
      expect(await answers(erasee)).toEqual(await answers(erasee)); // asked again: the answers kept
      expect([kept.holds(erasee), kept.holds(keeper)]).toEqual([true, true]);
      expect(bytesFoundUnder(f.dataDir, [erasee, `${erasee}:item7`]).length).toBeGreaterThan(0);

      const confirmations = await eraseUserOnBus(f.system, erasee);
      // 30 entries, the head document of the change-based sync, and what the trending projection counted of the 29
      // live ones (one process: the entries are applied inline, the counts by their own projection).
      expect(confirmations).toEqual([
        expect.objectContaining({ userId: erasee, service: 'history-svc', streamsDeleted: 1, documentsDeleted: 60 }),
      ]);

      // Nothing of the user's answers is kept in memory either (checked before any new read of them)
      expect([kept.holds(erasee), kept.holds(keeper)]).toEqual([false, true]);
      expect(await answers(erasee)).toEqual(newUser);
      expect(await answers(keeper)).toEqual(keeperBefore);
      expect(bytesFoundUnder(f.dataDir, [erasee, ...itemsOf(erasee)])).toEqual([]);
      expect(bytesFoundUnder(f.dataDir, [keeper]).length).toBeGreaterThan(0);
      expect((await f.backends.leftovers?.([erasee, ...itemsOf(erasee)])) ?? []).toEqual([]);
      expect((await f.backends.leftovers?.([keeper]))?.length ?? 1).toBeGreaterThan(0);
    });

    it('starts a new write of the erased user from empty: technical ids restart at 1', async () => {
      await fillHistory(erasee);
      await eraseUserOnBus(f.system, erasee);
      const client = await f.as(erasee);
      const res = await client.post('/api/history/v2', { item_id: 'urn:after', date: T0 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ item_id: 'urn:after', id: 1, date: T0, deleted: false });
      expect((await client.get('/api/history/v2?with_deleted=true')).body).toEqual({
        data: [res.body],
        last_update: T0,
        total: 1,
        sync_token: expect.any(String),
      });
    });

    it('confirms a second erasure of the same user (nothing left) without error', async () => {
      await fillHistory(erasee);
      await eraseUserOnBus(f.system, erasee);
      expect(await eraseUserOnBus(f.system, erasee)).toEqual([expect.objectContaining({ streamsDeleted: 0, documentsDeleted: 0 })]);
    });
  });
}
