// The Emmett-style peer (issue 28's "against the Emmett-style peer"): the history API's list and write built the plain
// Emmett way, with the real packages from npm: express 5, Emmett's SQLite event store (emmett-sqlite, on sqlite3), an
// inline projection writing the read model in the append's transaction, a HS256 check per request (jose), no cache.
// `node bench/emmett-peer/server.mjs <data dir> <jwt key file> <readers> <entries per reader>`: seeds the readers
// through the store's own append (one append per reader, so the inline projection writes their rows), listens on
// 127.0.0.1, prints its port on stdout. Tokens are the embedded system's (same key, issuer `udp-embedded`), so the
// bench sends both the very same requests. Seeded as bench/seed.ts seeds the readers: items `urn:reader-<r>:<i>`,
// date 1,600,000,000,000 + i s.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommandHandler, projections } from '@event-driven-io/emmett';
import { getSQLiteEventStore, sqliteConnection } from '@event-driven-io/emmett-sqlite';
import express from 'express';
import { jwtVerify } from 'jose';

const [dataDir, keyFile, readers = '0', perReader = '0'] = process.argv.slice(2);
const fileName = join(dataDir, 'emmett-peer.sqlite');
const secret = new TextEncoder().encode(readFileSync(keyFile, 'utf8').trim());
const T0 = 1_600_000_000_000;

const db = sqliteConnection({ fileName });
await db.command('PRAGMA journal_mode = WAL');
await db.command(
  `CREATE TABLE IF NOT EXISTS history_entries (user_id TEXT NOT NULL, item_id TEXT NOT NULL, id INTEGER NOT NULL,
   date INTEGER NOT NULL, deleted INTEGER NOT NULL, device_id TEXT, last_playback_position REAL, PRIMARY KEY (user_id, item_id))`,
);
await db.command('CREATE INDEX IF NOT EXISTS history_entries_by_date ON history_entries (user_id, date DESC)');
await db.command(
  'CREATE TABLE IF NOT EXISTS history_heads (user_id TEXT PRIMARY KEY, last_update INTEGER NOT NULL, version INTEGER NOT NULL)',
);

const userOf = (streamName) => streamName.slice('history-'.length);

/** The inline projection: each recorded entry upserted, and the user's head (newest date, version), in the append's transaction. */
const historyProjection = {
  name: 'history',
  canHandle: ['HistoryItemRecorded'],
  handle: async (events, { connection }) => {
    for (const { data, metadata } of events) {
      const userId = userOf(metadata.streamName);
      await connection.command(
        `INSERT INTO history_entries (user_id, item_id, id, date, deleted, device_id, last_playback_position)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, item_id) DO UPDATE SET date = excluded.date,
         deleted = excluded.deleted, device_id = excluded.device_id, last_playback_position = excluded.last_playback_position`,
        [userId, data.itemId, data.id, data.date, data.deleted ? 1 : 0, data.deviceId ?? null, data.lastPlaybackPosition ?? null],
      );
      await connection.command(
        `INSERT INTO history_heads (user_id, last_update, version) VALUES (?, ?, 1) ON CONFLICT (user_id) DO UPDATE
         SET last_update = MAX(last_update, excluded.last_update), version = version + 1`,
        [userId, data.date],
      );
    }
  },
};
const eventStore = getSQLiteEventStore({ fileName, projections: projections.inline([historyProjection]) });

/** The write's decision: the state is the entries' count (the next technical id); every write records one entry. */
const handle = CommandHandler({
  evolve: (state, event) => (event.type === 'HistoryItemRecorded' ? { count: state.count + 1 } : state),
  initialState: () => ({ count: 0 }),
});

for (let r = 0; r < Number(readers); r++) {
  const events = Array.from({ length: Number(perReader) }, (_, i) => ({
    type: 'HistoryItemRecorded',
    data: {
      itemId: `urn:reader-${r}:${i}`,
      id: i + 1,
      date: T0 + i * 1000,
      deleted: false,
      deviceId: 'seed',
      lastPlaybackPosition: (T0 + i * 1000) % 3600,
    },
  }));
  await eventStore.appendToStream(`history-bench-reader-${r}`, events);
}

const problem = (res, status, detail) => res.status(status).type('application/problem+json').send(JSON.stringify({ status, detail }));
const caller = async (req) => {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!token) return undefined;
  try {
    return (await jwtVerify(token, secret, { issuer: 'udp-embedded', algorithms: ['HS256'] })).payload.sub;
  } catch {
    return undefined;
  }
};
const toItem = (row) => ({
  date: row.date,
  deleted: row.deleted === 1,
  ...(row.device_id === null ? {} : { device_id: row.device_id }),
  id: row.id,
  item_id: row.item_id,
  ...(row.last_playback_position === null ? {} : { last_playback_position: row.last_playback_position }),
});

const app = express();
app.disable('x-powered-by');
app.get('/api/history/v2', async (req, res) => {
  const userId = await caller(req);
  if (!userId) return problem(res, 401, 'a valid bearer token is required');
  const limit = req.query.limit === undefined ? 100 : Number(req.query.limit);
  if (!Number.isInteger(limit) || limit < 0 || limit > 1000) return problem(res, 400, 'limit must be an integer from 0 to 1000');
  const after = req.query.after === undefined ? undefined : Number(req.query.after);
  if (after !== undefined && !Number.isInteger(after)) return problem(res, 400, 'after must be an integer');
  const withDeleted = req.query.with_deleted === 'true';
  const rows = await db.query(
    `SELECT * FROM history_entries WHERE user_id = ?${withDeleted ? '' : ' AND deleted = 0'}${after === undefined ? '' : ' AND date >= ?'}
     ORDER BY date DESC LIMIT ?`,
    [userId, ...(after === undefined ? [] : [after]), limit + 1],
  );
  const head = await db.querySingle('SELECT last_update, version FROM history_heads WHERE user_id = ?', [userId]);
  const data = rows.slice(0, limit).map(toItem);
  const more = rows.length > limit && data.length > 0;
  res.json({
    data,
    last_update: head?.last_update ?? 0,
    ...(more ? { next: `?limit=${limit}&before=${data.at(-1).date}` } : {}),
    sync_token: String(head?.version ?? 0),
    total: data.length,
  });
});
app.post('/api/history/v2', express.json(), async (req, res) => {
  const userId = await caller(req);
  if (!userId) return problem(res, 401, 'a valid bearer token is required');
  const { item_id: itemId, last_playback_position: position, date = Date.now() } = req.body ?? {};
  if (typeof itemId !== 'string' || itemId.length === 0 || itemId.length > 256)
    return problem(res, 400, 'item_id: a string of 1 to 256 characters');
  const result = await handle(eventStore, `history-${userId}`, (state) => ({
    type: 'HistoryItemRecorded',
    data: { itemId, id: state.count + 1, date, deleted: false, lastPlaybackPosition: position },
  }));
  const { data } = result.newEvents[0];
  res.json(
    toItem({
      date: data.date,
      deleted: 0,
      device_id: null,
      id: data.id,
      item_id: data.itemId,
      last_playback_position: data.lastPlaybackPosition ?? null,
    }),
  );
});
const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
server.keepAliveTimeout = 65_000;
