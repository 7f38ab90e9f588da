import { randomUUID } from 'node:crypto';
import { filesHolding, postgresDataDirs, replicaCaughtUpAndCheckpointed, reportSkipped, waitUntil } from '@udp/test-kit';
import { eventStoreContract } from './eventstore.contract';
import { PostgresEventStore, decodePosition, segmentHash, segmentKeyOf } from './postgres';
import { freshKey } from './postgres-keys';
import { LOCK_CLASS } from './postgres-schema';
import type { RecordedEvent } from './port';

/**
 * PostgreSQL: POSTGRES_URL (tools/servers/with-servers.sh starts a server and sets it); skipped, saying so, without it.
 * Every test names its streams afresh, so runs share one database.
 */
const url = process.env.POSTGRES_URL;

const event = (type: string, data: Record<string, unknown> = {}) => ({ id: randomUUID(), type, data });
const unique = (name: string) => `${name}${randomUUID().replace(/-/g, '')}`;

if (!url) {
  reportSkipped('EventStore contract: postgresql', 'POSTGRES_URL is unset (tools/servers/with-servers.sh sets it)');
} else {
  eventStoreContract('postgresql', async () => new PostgresEventStore(url));

  describe('PostgresEventStore feed', () => {
    const { Client } = require('pg') as typeof import('pg');
    const stores: PostgresEventStore[] = [];
    const clients: Array<import('pg').Client> = [];
    const open = (options = {}) => {
      const store = new PostgresEventStore(url, options);
      stores.push(store);
      return store;
    };
    const client = async () => {
      const c = new Client({ connectionString: url });
      await c.connect();
      clients.push(c);
      return c;
    };
    afterEach(async () => {
      for (const c of clients.splice(0)) await c.end().catch(() => undefined);
      for (const s of stores.splice(0)) await s.close();
    });

    /** An append in a transaction of another connection, left open until `commit` (the late committer). */
    const heldAppend = async (streamId: string, type: string) => {
      const c = await client();
      await c.query('BEGIN');
      // The stream's lock (udp_append takes it too), then its key, or one made here when it has none yet.
      await c.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, streamId]);
      const [stored] = (await c.query('SELECT key_id::text AS key_id, key FROM udp_stream_keys WHERE stream_id = $1', [streamId])).rows;
      const heldKey = stored ? { id: BigInt(stored.key_id), key: stored.key as Buffer } : freshKey();
      const [row] = (
        await c.query(`SELECT r_transaction_id, r_positions FROM udp_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, [
          [streamId],
          [-2],
          [1],
          [null],
          [randomUUID()],
          [type],
          ['{}'],
          ['{}'],
          Date.now(),
          [heldKey.id.toString()],
          [stored ? null : heldKey.key],
        ])
      ).rows;
      return {
        transactionId: BigInt(row.r_transaction_id),
        position: BigInt(row.r_positions[0]),
        commit: () => c.query('COMMIT'),
      };
    };

    it('delivers an event committed after a later one exactly once, in transaction order, and caughtUp waits for it', async () => {
      const store = open();
      const prefix = unique('late');
      const seen: RecordedEvent[] = [];
      const sub = store.subscribe({ streamPrefixes: [prefix] }, async (e) => void seen.push(e));
      await sub.caughtUp();

      // The early transaction takes its position first and stays open; a later one takes a larger position and commits.
      const early = await heldAppend(`${prefix}-a`, 'Early');
      const later = await store.appendToStream(`${prefix}-b`, [event('Later')], { expectedRevision: 'no_stream' });
      expect(decodePosition(later.position).position).toBeGreaterThan(early.position);
      // A sequence-ordered reader would deliver Later now and move past Early's position for ever; this one waits.
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(seen.map((e) => e.type)).toEqual([]);
      let caughtUp = false;
      const waiting = sub.caughtUp().then(() => (caughtUp = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(caughtUp).toBe(false);

      await early.commit();
      await waiting;
      expect(seen.map((e) => e.type)).toEqual(['Early', 'Later']);
      expect(seen[0].position < seen[1].position).toBe(true);
      expect(seen[1].position).toBe(later.position);
      // Resumed from the first, it delivers the second only; from the second, nothing.
      const resumed: string[] = [];
      const again = store.subscribe({ streamPrefixes: [prefix], fromPosition: seen[0].position }, async (e) => void resumed.push(e.type));
      await again.caughtUp();
      expect(resumed).toEqual(['Later']);
      await again.stop();
      await sub.stop();
    });

    it('gives every event of concurrent appenders, some committing late, to a live subscriber exactly once, in increasing positions', async () => {
      const prefix = unique('race');
      const writers = [open(), open(), open()];
      const follower = open();
      const seen: RecordedEvent[] = [];
      const sub = follower.subscribeBatches({ streamPrefixes: [prefix] }, { max: 50, handle: async (events) => void seen.push(...events) });
      await sub.caughtUp();
      const expected = new Set<string>();
      const held: Array<Promise<unknown>> = [];
      const appends: Array<Promise<unknown>> = [];
      for (let i = 0; i < 120; i++) {
        const writer = writers[i % writers.length];
        const stream = `${prefix}-s${i % 7}`;
        if (i % 10 === 3) {
          // Every tenth: an append held open 50-400 ms while others commit after it.
          held.push(
            heldAppend(stream, `Held${i}`).then(async (h) => {
              expected.add(`Held${i}`);
              await new Promise((resolve) => setTimeout(resolve, 50 + ((i * 37) % 350)));
              await h.commit();
            }),
          );
        } else {
          expected.add(`E${i}`);
          appends.push(writer.appendToStream(stream, [event(`E${i}`)], { expectedRevision: 'any' }));
        }
        if (i % 5 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await Promise.all([...held, ...appends]);
      await sub.caughtUp();
      const types = seen.map((e) => e.type);
      expect(new Set(types)).toEqual(expected);
      expect(types).toHaveLength(expected.size);
      for (let i = 1; i < seen.length; i++) expect(seen[i - 1].position < seen[i].position).toBe(true);
      // Each stream's events in its revision order.
      for (let s = 0; s < 7; s++) {
        const revisions = seen.filter((e) => e.streamId === `${prefix}-s${s}`).map((e) => e.revision);
        expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
      }
      // A replay from the start delivers exactly the same.
      const replay: RecordedEvent[] = [];
      const again = follower.subscribe({ streamPrefixes: [prefix] }, async (e) => void replay.push(e));
      await again.caughtUp();
      expect(replay.map((e) => [e.id, e.position])).toEqual(seen.map((e) => [e.id, e.position]));
      await again.stop();
      await sub.stop();
    }, 60_000);

    it("wakes on another store object's commit through LISTEN/NOTIFY, without polling", async () => {
      const prefix = unique('listen');
      const follower = open({ pollMs: 3_600_000 });
      const writer = open();
      const seen: string[] = [];
      const sub = follower.subscribe({ streamPrefixes: [prefix] }, async (e) => void seen.push(e.type));
      await sub.caughtUp();
      await new Promise((resolve) => setTimeout(resolve, 200)); // the LISTEN connection up
      const started = Date.now();
      await writer.appendToStream(`${prefix}-1`, [event('Notified')], { expectedRevision: 'no_stream' });
      await waitUntil(() => seen.length === 1, 3000);
      expect(seen).toEqual(['Notified']);
      expect(Date.now() - started).toBeLessThan(3000);
      await sub.stop();
    });

    it('listens again after its LISTEN connection is killed, and reads what was committed meanwhile', async () => {
      const prefix = unique('relisten');
      const name = unique('udp-test-listen');
      const follower = open({ pollMs: 3_600_000, applicationName: name });
      const problems: unknown[] = [];
      follower.onListenerProblem = (error) => problems.push(error);
      const writer = open();
      const seen: string[] = [];
      const sub = follower.subscribe({ streamPrefixes: [prefix] }, async (e) => void seen.push(e.type));
      await sub.caughtUp();
      const admin = await client();
      await waitUntil(
        async () => (await admin.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [`${name}-listen`])).rowCount === 1,
      );
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [`${name}-listen`]);
      await writer.appendToStream(`${prefix}-1`, [event('WhileDown')], { expectedRevision: 'no_stream' });
      await waitUntil(() => seen.length === 1, 10_000);
      expect(problems.length).toBeGreaterThan(0);
      await writer.appendToStream(`${prefix}-1`, [event('AfterReconnect')], { expectedRevision: 0 });
      await waitUntil(() => seen.length === 2, 5000);
      expect(seen).toEqual(['WhileDown', 'AfterReconnect']);
      await sub.stop();
    }, 30_000);

    it('polls: an event that came with no notification is read within the poll interval', async () => {
      const prefix = unique('poll');
      const follower = open({ pollMs: 200 });
      const seen: string[] = [];
      const sub = follower.subscribe({ streamPrefixes: [prefix] }, async (e) => void seen.push(e.type));
      await sub.caughtUp();
      const c = await client();
      // Stored as an append stores it, minus the NOTIFY (a notification lost with its connection).
      await c.query(
        `INSERT INTO udp_events (stream_id, revision, event_id, type, data, metadata, created_at) VALUES ($1, 0, $2, 'Silent', '{}', '{}', 0)`,
        [`${prefix}-1`, randomUUID()],
      );
      await waitUntil(() => seen.length === 1, 3000);
      expect(seen).toEqual(['Silent']);
      await sub.stop();
    });

    it('reads only the segments asked for, through the index of their count', async () => {
      const prefix = `${unique('seg')}-`;
      const store = open();
      const streams = Array.from({ length: 40 }, (_, i) => `${prefix}user${i}${i % 3 === 0 ? '/key' : ''}`);
      for (const s of streams) await store.appendToStream(s, [event('A'), event('B')], { expectedRevision: 'no_stream' });
      const segmentOfStream = (s: string) => segmentHash(segmentKeyOf(s)!) % 4;
      const follow = async (ids: number[], prefixes = [prefix]) => {
        const seen: RecordedEvent[] = [];
        const sub = store.subscribe({ streamPrefixes: prefixes, segments: { count: 4, ids } }, async (e) => void seen.push(e));
        await sub.caughtUp();
        await sub.stop();
        return seen;
      };
      const low = await follow([0, 1]);
      const high = await follow([2, 3]);
      expect(low.length).toBeGreaterThan(0);
      expect(high.length).toBeGreaterThan(0);
      expect(low.every((e) => [0, 1].includes(segmentOfStream(e.streamId)))).toBe(true);
      expect(high.every((e) => [2, 3].includes(segmentOfStream(e.streamId)))).toBe(true);
      expect(low.length + high.length).toBe(80);
      for (let i = 1; i < low.length; i++) expect(low[i - 1].position < low[i].position).toBe(true);
      // The key is the user part: a user's streams are in one segment, as segmentOf has it (history-<user>/<rest>).
      expect(segmentKeyOf(`${prefix}user3/key`)).toBe('user3');
      // A prefix of another shape (two dashes) is not filtered by segment: every event comes.
      const other = unique('two-dash');
      await store.appendToStream(`${other}-x-1`, [event('A')], { expectedRevision: 'no_stream' });
      expect(await follow([0], [`${other}-x-`])).toHaveLength(1);

      const c = await client();
      const plan = (
        await c.query(
          `EXPLAIN SELECT e.position FROM udp_events AS e WHERE (e.segment_hash % 4) = 1 AND (e.transaction_id, e.position) > ('0'::xid8, 0)
           ORDER BY e.transaction_id, e.position LIMIT 500`,
        )
      ).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
      expect(plan).toContain('udp_events_segment_4');
    });

    it('counts the backlog of a subscription behind, its segments only', async () => {
      const prefix = `${unique('backlog')}-`;
      const store = open();
      for (let i = 0; i < 12; i++) await store.appendToStream(`${prefix}u${i}`, [event('A')], { expectedRevision: 'no_stream' });
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const all = store.subscribe({ streamPrefixes: [prefix] }, () => held);
      await waitUntil(async () => (await all.backlog(100)).events === 12);
      const backlog = await all.backlog(100);
      expect(backlog.oldestCreatedAt).toBeGreaterThan(Date.now() - 60_000);
      const ids = [0, 1];
      const mine = Array.from({ length: 12 }, (_, i) => segmentHash(`u${i}`) % 4).filter((s) => ids.includes(s)).length;
      const some = store.subscribe({ streamPrefixes: [prefix], segments: { count: 4, ids } }, () => held);
      await waitUntil(async () => (await some.backlog(100)).events === mine);
      release();
      await all.stop();
      await some.stop();
    });

    it('refuses text PostgreSQL cannot store, storing nothing, and answers a standby-free ping', async () => {
      const store = open();
      const s = unique('text');
      await expect(store.appendToStream(s, [{ id: 'a\0b', type: 'A', data: {} }], { expectedRevision: 'any' })).rejects.toThrow(
        /not storable/,
      );
      await expect(store.appendToStream(s, [{ id: 'x', type: '\uD800', data: {} }], { expectedRevision: 'any' })).rejects.toThrow(
        /not storable/,
      );
      expect((await store.readStream(s)).revision).toBe(-1);
      // NUL inside data is JSON-escaped and kept.
      await store.appendToStream(s, [{ id: randomUUID(), type: 'A', data: { text: 'a\0b' } }], { expectedRevision: 'no_stream' });
      expect((await store.readStream(s)).events[0].data).toEqual({ text: 'a\0b' });
      expect(await store.ping()).toBe(true);
    });

    const restartScript = process.env.POSTGRES_RESTART_SCRIPT;
    (restartScript ? it : it.skip)(
      'survives a restart of the server: refused while it is down (503), then appends, reads and delivers again',
      async () => {
        const { execFileSync } = require('node:child_process') as typeof import('node:child_process');
        const prefix = unique('restart');
        const store = open({ pollMs: 200 });
        const seen: string[] = [];
        const sub = store.subscribe({ streamPrefixes: [prefix] }, async (e) => void seen.push(e.type));
        await store.appendToStream(`${prefix}-1`, [event('Before')], { expectedRevision: 'no_stream' });
        await waitUntil(() => seen.length === 1, 5000);
        execFileSync('bash', [restartScript!, 'stop'], { stdio: 'inherit' });
        try {
          await expect(store.appendToStream(`${prefix}-1`, [event('Down')], { expectedRevision: 0 })).rejects.toMatchObject({
            name: 'StoreUnavailableError',
          });
          expect(await store.ping()).toBe(false);
        } finally {
          execFileSync('bash', [restartScript!, 'start'], { stdio: 'inherit' });
        }
        // The pool connects anew; the LISTEN connection comes back (or the poll reads).
        await waitUntil(async () => store.ping(), 40_000);
        await store.appendToStream(`${prefix}-1`, [event('After')], { expectedRevision: 0 });
        await waitUntil(() => seen.length === 2, 10_000);
        expect(seen).toEqual(['Before', 'After']);
        expect((await store.readStream(`${prefix}-1`)).events.map((e) => e.type)).toEqual(['Before', 'After']);
        await sub.stop();
      },
      90_000,
    );

    it('reads streams asked for at once together, each answered as it would be alone (missing, empty from a revision, whole)', async () => {
      const store = open();
      const streams = Array.from({ length: 12 }, (_, i) => unique(`together${i}-`));
      for (const [i, streamId] of streams.entries())
        if (i % 3 !== 0) await store.appendToStream(streamId, [event('A', { i }), event('B', { i })], { expectedRevision: 'no_stream' });
      const asked = streams.map((streamId, i) => ({ streamId, fromRevision: i % 2 }));
      const round = (stream: { streamId: string; fromRevision: number }) =>
        store.readStream(stream.streamId, { fromRevision: stream.fromRevision });
      const together = await Promise.all(asked.map(round));
      const alone: Awaited<ReturnType<typeof round>>[] = [];
      for (const stream of asked) alone.push(await round(stream));
      expect(together).toEqual(alone);
      expect(together.map((r) => r.revision)).toEqual(streams.map((_, i) => (i % 3 === 0 ? -1 : 1)));
      expect(together[1].events.map((e) => e.data)).toEqual([{ i: 1 }]);
      expect(together[2].events.map((e) => e.type)).toEqual(['A', 'B']);
    });

    it('answers StoreUnavailableError, and ping false, when the server cannot be reached', async () => {
      const store = new PostgresEventStore('postgres://postgres@127.0.0.1:1/none');
      await expect(store.appendToStream(unique('down'), [event('A')], { expectedRevision: 'any' })).rejects.toMatchObject({
        name: 'StoreUnavailableError',
      });
      await expect(store.readStream(unique('down'))).rejects.toMatchObject({ name: 'StoreUnavailableError' });
      expect(await store.ping()).toBe(false);
      await store.close();
    });
  });

  describe('PostgresEventStore erasure (crypto-shredding)', () => {
    const { Client } = require('pg') as typeof import('pg');
    const replicaUrl = process.env.POSTGRES_REPLICA_URL;
    const dirs = postgresDataDirs();
    const clients: Array<import('pg').Client> = [];
    const connect = async (to: string) => {
      const c = new Client({ connectionString: to });
      await c.connect();
      clients.push(c);
      return c;
    };
    afterEach(async () => {
      for (const c of clients.splice(0)) await c.end().catch(() => undefined);
    });

    it('stores payloads sealed, and after deleteStream no file of the primary or the replica holds the key or the data', async () => {
      if (!replicaUrl || dirs.length !== 2) throw new Error('POSTGRES_REPLICA_URL and POSTGRES_DATA_DIRS are needed (with-servers.sh)');
      const store = new PostgresEventStore(url);
      const sql = await connect(url);
      const replica = await connect(replicaUrl);
      // The failover suite (tools/faults) promotes the replica, and npm test runs every project under one with-servers.sh.
      const standby = (await replica.query('SELECT pg_is_in_recovery() AS standby')).rows[0].standby === true;
      if (!standby)
        process.stdout.write("[postgres erasure] the replica was promoted by an earlier suite: the primary's data dir alone is scanned\n");
      const scanned = standby ? dirs : dirs.slice(0, 1);
      const prefix = unique('shred');
      const [gone, kept] = [`${prefix}-gone`, `${prefix}-kept`];
      const [goneMarker, keptMarker] = [unique('GONE'), unique('KEPT')];
      try {
        const seen: RecordedEvent[] = [];
        const sub = store.subscribe({ streamPrefixes: [prefix] }, async (e) => void seen.push(e));
        for (const [stream, marker] of [
          [gone, goneMarker],
          [kept, keptMarker],
        ]) {
          await store.appendToStream(stream, [{ ...event('Titled', { title: marker }), metadata: { note: marker } }], {
            expectedRevision: 'no_stream',
          });
          await store.appendToStream(stream, [event('Titled', { title: `${marker}-2` })], { expectedRevision: 0 });
        }
        // What the store stores: no payload in plain text.
        const { rows } = await sql.query('SELECT data, metadata FROM udp_events WHERE stream_id = ANY($1)', [[gone, kept]]);
        expect(rows).toHaveLength(4);
        for (const row of rows) expect(`${row.data}${row.metadata}`).not.toMatch(/GONE|KEPT/);
        // What it answers: the payloads as written, through reads and the feed.
        expect((await store.readStream(gone)).events.map((e) => [e.data.title, e.metadata.note])).toEqual([
          [goneMarker, goneMarker],
          [`${goneMarker}-2`, undefined],
        ]);
        await sub.caughtUp();
        expect(seen.map((e) => e.data.title)).toEqual([goneMarker, `${goneMarker}-2`, keptMarker, `${keptMarker}-2`]);

        const keyOf = async (stream: string) =>
          (await sql.query('SELECT key FROM udp_stream_keys WHERE stream_id = $1', [stream])).rows[0].key as Buffer;
        const [goneKey, keptKey] = [await keyOf(gone), await keyOf(kept)];
        await sql.query('CHECKPOINT');
        if (standby) await replicaCaughtUpAndCheckpointed(sql, replica);
        // The scan finds a key where PostgreSQL keeps it (so a clean scan below means something).
        const before = filesHolding(scanned, [goneKey]);
        for (const dir of scanned) expect(before.get('0')?.some((f) => f.startsWith(dir))).toBe(true);

        await store.deleteStream(gone);
        if (standby) await replicaCaughtUpAndCheckpointed(sql, replica);
        const after = filesHolding(scanned, [goneKey, Buffer.from(goneMarker), keptKey]);
        expect({ key: after.get('0') ?? [], marker: after.get('1') ?? [] }).toEqual({ key: [], marker: [] });
        for (const dir of scanned) expect(after.get('2')?.some((f) => f.startsWith(dir))).toBe(true);

        // The other stream reads as before; the deleted one starts afresh under a new key.
        expect((await store.readStream(kept)).events.map((e) => e.data.title)).toEqual([keptMarker, `${keptMarker}-2`]);
        expect((await store.readStream(gone)).revision).toBe(-1);
        await store.appendToStream(gone, [event('Titled', { title: 'again' })], { expectedRevision: 'no_stream' });
        expect((await keyOf(gone)).equals(goneKey)).toBe(false);
        expect((await store.readStream(gone)).events.map((e) => e.data.title)).toEqual(['again']);
        await sub.stop();
      } finally {
        await store.close();
      }
    }, 60_000);

    it('waits for a snapshot taken before the deletion to end before it rewrites the keys (else the key would be copied)', async () => {
      const store = new PostgresEventStore(url);
      const sql = await connect(url);
      const holder = await connect(url);
      const stream = unique('held-');
      try {
        await store.appendToStream(stream, [event('A', { n: 1 })], { expectedRevision: 'no_stream' });
        const key = (await sql.query('SELECT key FROM udp_stream_keys WHERE stream_id = $1', [stream])).rows[0].key as Buffer;
        // A reader's snapshot from before the deletion: to it the key row is still live.
        await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
        await holder.query('SELECT count(*) FROM udp_stream_keys');
        let deleted = false;
        const deleting = store.deleteStream(stream).then(() => (deleted = true));
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(deleted).toBe(false);
        await holder.query('COMMIT');
        await deleting;
        expect(filesHolding(dirs.slice(0, 1), [key]).get('0') ?? []).toEqual([]);
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        await store.close();
      }
    });

    it("never stores a deleted stream's key again: an append with a key cached before the deletion is sealed anew", async () => {
      const writer = new PostgresEventStore(url);
      const eraser = new PostgresEventStore(url);
      const sql = await connect(url);
      const stream = unique('stale-');
      try {
        await writer.appendToStream(stream, [event('A', { n: 1 })], { expectedRevision: 'no_stream' });
        const first = (await sql.query('SELECT key FROM udp_stream_keys WHERE stream_id = $1', [stream])).rows[0].key as Buffer;
        await eraser.deleteStream(stream);
        // The writer still holds the old key in its cache: the store answers rekey, the writer seals with a new key.
        await writer.appendToStream(stream, [event('B', { n: 2 })], { expectedRevision: 'any' });
        const { rows } = await sql.query('SELECT key FROM udp_stream_keys WHERE stream_id = $1', [stream]);
        expect(rows).toHaveLength(1);
        expect((rows[0].key as Buffer).equals(first)).toBe(false);
        expect((await eraser.readStream(stream)).events.map((e) => e.data)).toEqual([{ n: 2 }]);
      } finally {
        await writer.close();
        await eraser.close();
      }
    });
  });
}
