import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EventStore, MemoryEventStore, SqliteEventStore } from '@udp/eventstore';
import { given } from '@udp/test-kit';
import { racingStore, type RacingStore } from '@udp/test-system';
import { type Options, type PlaylistSystem, type UserClient, startPlaylistSystem } from '../testing/playlist-system';

/**
 * Concurrent changes to one user's playlists never lose an acknowledged bookmark: a conflicting append is
 * re-read and re-decided a bounded number of times, then answered 429; what was not acknowledged leaves no
 * trace. Run on the memory store and on a real SQLite file (the embedded default).
 */
const PARALLEL = 20;
const V2 = '/api/playlist/v2';
const V3 = '/api/playlist/v3';

describe.each([
  ['memory', () => ({ store: new MemoryEventStore() as EventStore, cleanup: () => undefined })],
  [
    'SQLite',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'playlist-concurrency-'));
      return {
        store: new SqliteEventStore(join(dir, 'events.sqlite')) as EventStore,
        cleanup: () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  ],
])('%s event store', (_name, makeStore) => {
  let s: PlaylistSystem | undefined;
  let cleanup: () => void = () => undefined;

  async function start(options: Options & { racing?: boolean }): Promise<{ user: UserClient; store: RacingStore | EventStore }> {
    const made = makeStore();
    cleanup = made.cleanup;
    // Every one of the first PARALLEL commands reads the same revision, so all but one meet a conflict.
    const store = options.racing ? racingStore(made.store, PARALLEL) : made.store;
    s = await startPlaylistSystem({ ...options, store, ...(options.racing && { writesSideBySide: true }) });
    return { user: await s.as('dana'), store };
  }
  afterEach(async () => {
    await s?.stop();
    s = undefined;
    cleanup();
  });

  const items = Array.from({ length: PARALLEL }, (_, i) => `urn:item:${i}`);
  const storedItems = async (user: UserClient, businessId: string) =>
    (await user.get(`${V3}/${businessId}`)).body.bookmarks as Array<{ itemId: string; id: number }>;

  it(`${PARALLEL} parallel adds that all race: conflicts are retried and every add is acknowledged and stored`, async () => {
    // Each retry round lets at least one writer through, so PARALLEL - 1 retries always suffice.
    await given(() => start({ racing: true, conflictRetries: PARALLEL - 1 }))
      .when(({ user }) => Promise.all(items.map((itemId) => user.post(`${V3}/watch_later/bookmarks`, { itemId }))))
      .then(async (answers, { user, store }) => {
        expect(answers.map((a) => a.status)).toEqual(items.map(() => 201));
        expect((store as RacingStore).conflicts).toBeGreaterThanOrEqual(PARALLEL - 1);
        const stored = await storedItems(user, 'watch_later');
        expect(stored.map((b) => b.itemId).sort()).toEqual([...items].sort());
        // Every acknowledged bookmark is the stored one, and the per-user sequence gave each a distinct id.
        expect(answers.map((a) => a.body).sort((a, b) => a.id - b.id)).toEqual([...stored].sort((a, b) => a.id - b.id));
        expect(new Set(stored.map((b) => b.id)).size).toBe(PARALLEL);
      });
  });

  it(`${PARALLEL} parallel adds with few retries: each answer is 201 or 429, and the stored set is exactly the acknowledged set`, async () => {
    await given(() => start({ racing: true, conflictRetries: 2 }))
      .when(({ user }) => Promise.all(items.map((itemId) => user.post(`${V2}/watch_later/bookmarks`, { media_id: itemId }))))
      .then(async (answers, { user, store }) => {
        for (const answer of answers) {
          expect([201, 429]).toContain(answer.status);
          if (answer.status === 429) {
            expect(answer.headers['retry-after']).toBeDefined();
            expect(answer.headers['content-type']).toMatch(/application\/problem\+json/);
          }
        }
        const acknowledged = answers.filter((a) => a.status === 201).map((a) => a.body.media_id as string);
        expect(acknowledged.length).toBeGreaterThan(0);
        // Whether a retry races again depends on how the retries interleave (a loaded CI run saw all 20 succeed within
        // 2 retries), so how many answer 429 is not asserted; the case without retries asks for them.
        expect((store as RacingStore).conflicts).toBeGreaterThan(0);
        expect((await storedItems(user, 'watch_later')).map((b) => b.itemId).sort()).toEqual(acknowledged.sort());
      });
  });

  it('without retries, one racing writer wins and the others answer 429 leaving no trace', async () => {
    await given(() => start({ racing: true, conflictRetries: 0 }))
      .when(({ user }) => Promise.all(items.map((itemId) => user.post(`${V3}/watch_later/bookmarks`, { itemId }))))
      .then(async (answers, { user }) => {
        expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
        expect(answers.filter((a) => a.status === 429)).toHaveLength(PARALLEL - 1);
        expect((await storedItems(user, 'watch_later')).map((b) => b.itemId)).toEqual([answers.find((a) => a.status === 201)!.body.itemId]);
      });
  });

  it(`${PARALLEL} parallel creations of playlists with content, racing: every acknowledged playlist and bookmark is there`, async () => {
    await given(() => start({ racing: true, conflictRetries: PARALLEL - 1, limits: { maxPlaylists: 50 } }))
      .when(({ user }) =>
        Promise.all(
          items.map((itemId, i) =>
            i % 2
              ? user.post(`${V2}/new/bookmarks`, { media_id: itemId, name: `v2 ${i}` })
              : user.post(`${V3}/new/bookmarks`, { businessId: `b${i}`, itemId, name: `v3 ${i}` }),
          ),
        ),
      )
      .then(async (answers, { user }) => {
        expect(answers.map((a) => a.status)).toEqual(items.map(() => 201));
        const playlists = (await user.get(V3)).body.playlists as Array<{ businessId: string; bookmarksCount: number }>;
        expect(playlists).toHaveLength(PARALLEL + 1);
        const bookmarkIds: number[] = [];
        for (const p of playlists.slice(1)) {
          const stored = await storedItems(user, encodeURIComponent(p.businessId));
          expect(stored).toHaveLength(1);
          bookmarkIds.push(stored[0].id);
        }
        expect(new Set(bookmarkIds).size).toBe(PARALLEL);
      });
  });

  it(`${PARALLEL} parallel writes of every kind to one playlist, unforced: nothing acknowledged is lost`, async () => {
    await given(async () => {
      const { user } = await start({});
      await user.post(`${V3}/mixed`, { name: 'Mixed' });
      return user;
    })
      .when((user) =>
        Promise.all(
          items.map((itemId, i) =>
            i % 3 === 0
              ? user.post(`${V3}/mixed/bookmarks`, { itemId })
              : i % 3 === 1
                ? user.put(`${V3}/mixed/bookmarks`, [{ itemId }, { itemId: `${itemId}:bis` }])
                : user.post(`${V3}/mixed`, { name: `Mixed ${i}` }),
          ),
        ),
      )
      .then(async (answers, user) => {
        for (const answer of answers) expect([200, 201, 429]).toContain(answer.status);
        const acknowledged = answers.flatMap((a, i) =>
          a.status >= 300 || i % 3 === 2 ? [] : i % 3 === 0 ? [items[i]] : [items[i], `${items[i]}:bis`],
        );
        expect((await storedItems(user, 'mixed')).map((b) => b.itemId).sort()).toEqual(acknowledged.sort());
      });
  });
});
