// Writes large histories straight into history-svc's SQLite event file (not through HTTP), for the bench:
// `node dist/bench/seed.js <file> <users> <entries per user> <long-history user> <events of that user> [<readers> <entries per reader>] [--interleaved]`.
// Users are `seed-user-<n>`; readers (optional) are `bench-reader-<n>`. Events are those the service writes (owner
// recorded, rows as its writer thread stores them), so the service folds and projects them as its own.
//
// `--interleaved`: the users' entries in the order a broadcaster's log holds them, round by round (every user's first
// entry, then every user's second, ...), so a user's 100 events lie on 100 different pages of the file as in
// production, not side by side. Without it, each user's entries are written together (as before: the other benches).
//
// Fast (each step measured: bench/README.md, "Seeding"):
// - the store opens the file first (it creates the tables and WAL mode as the service has them), then one connection
//   of our own writes with `synchronous = OFF` and no journal at all (`journal_mode = OFF`, WAL set back at the end:
//   no page is written twice, once to the WAL and again at the checkpoint);
// - the users' events made by SQLite itself in one INSERT ... SELECT over a table of the users and one of the rounds
//   (printf for the JSON and for the event ids): no call from JavaScript per event;
// - the events' stream index dropped before the rows and built after them (one sort, not 10,000,000 inserts at
//   random places of a B-tree larger than the page cache);
// - the readers and the long history (a few hundred thousand events at most) from JavaScript, 100 rows per INSERT,
//   with the same JSON (`template`, checked against JSON.stringify and against the users' first row).
// If the process dies midway the file is unusable: the bench removes it with its data dir.
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { SqliteEventStore, streamKey } from '@udp/eventstore';
import { historyStreamId } from '../apps/history-svc/src/domain/aggregate';

const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const [file, users, perUser, longUser, longEvents, readers = '0', perReader = '0'] = process.argv
  .slice(2)
  .filter((a) => !a.startsWith('--'));
const INTERLEAVED = flags.includes('--interleaved');
const T0 = 1_600_000_000_000;
/** Events per transaction. */
const BATCH = 100_000;
/** Rows per INSERT statement (8 parameters each). */
const ROWS = 100;
const COLUMNS = '(stream_id, stream_key, revision, event_id, type, data, metadata, created_at)';
const EVENTS_INDEX = 'events_by_stream';

/** One stream being written: its id, key and metadata made once. */
interface Stream {
  id: string;
  key: bigint;
  metadata: string;
}
const streamOf = (userId: string): Stream => {
  const id = historyStreamId(userId);
  return { id, key: streamKey(id), metadata: JSON.stringify({ owner: { userId } }) };
};

/** The data of entry `n` (item `<prefix><item>`, date T0 + n s): the bytes of JSON.stringify of the object. */
function template(prefix: string, n: number, item: number): string {
  const date = T0 + n * 1000;
  return `{"itemId":"${prefix}${item}","id":${item + 1},"date":${date},"deleted":false,"deviceId":"seed","lastPlaybackPosition":${date % 3600}}`;
}
if (
  JSON.stringify({
    itemId: 'urn:x:7',
    id: 8,
    date: T0 + 7000,
    deleted: false,
    deviceId: 'seed',
    lastPlaybackPosition: (T0 + 7000) % 3600,
  }) !== template('urn:x:', 7, 7)
) {
  throw new Error('the template is not the bytes of JSON.stringify');
}

async function seed(): Promise<void> {
  const started = performance.now();
  /** Each step's seconds, and the CPU seconds this process spent in it (the rest: waiting for the disk or the CPU). */
  const steps: Record<string, { seconds: number; cpu: number }> = {};
  let stepStart = started;
  let cpuStart = process.cpuUsage();
  const step = (name: string) => {
    const now = performance.now();
    const cpu = process.cpuUsage(cpuStart);
    steps[name] = { seconds: Number(((now - stepStart) / 1000).toFixed(2)), cpu: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)) };
    stepStart = now;
    cpuStart = process.cpuUsage();
  };
  // The schema as the service makes it; nothing is appended through it.
  await new SqliteEventStore(file).close();
  const db = new Database(file);
  const indexSql = db
    .prepare<[string], string>("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?")
    .pluck()
    .get(EVENTS_INDEX);
  if (!indexSql) throw new Error(`no index ${EVENTS_INDEX} in ${file}: the store's schema changed, bench/seed.ts must follow it`);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('locking_mode = EXCLUSIVE');
  db.pragma('temp_store = MEMORY');
  db.pragma('cache_size = -262144'); // 256 MiB of page cache
  db.exec(`DROP INDEX ${EVENTS_INDEX}`);
  step('open');
  const many = db.prepare(
    `INSERT INTO events ${COLUMNS} VALUES ${Array.from({ length: ROWS }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
  );
  const one = db.prepare(`INSERT INTO events ${COLUMNS} VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const setRevision = db.prepare(
    'INSERT INTO streams (stream_id, revision) VALUES (?, ?) ON CONFLICT(stream_id) DO UPDATE SET revision = excluded.revision',
  );
  const now = Date.now();
  let events = 0;
  let params: unknown[] = [];
  const flush = () => {
    if (params.length === ROWS * 8) many.run(params);
    else for (let i = 0; i < params.length; i += 8) one.run(params.slice(i, i + 8));
    params = [];
  };
  let inTransaction = 0;
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  /** Entry `n` of a stream: item `<prefix><item>`, date T0 + n s; the same bytes as JSON.stringify of the object. */
  const event = (stream: Stream, prefix: string, n: number, item: number) => {
    if (inTransaction === 0) begin.run();
    params.push(stream.id, stream.key, n, randomUUID(), 'HistoryItemRecorded', template(prefix, n, item), stream.metadata, now);
    if (params.length === ROWS * 8) flush();
    events++;
    if (++inTransaction === BATCH) {
      flush();
      commit.run();
      inTransaction = 0;
    }
  };
  const revisions: Array<[string, number]> = [];
  const userCount = Number(users);
  const entries = Number(perUser);
  if (userCount > 0 && entries > 0) {
    // The users' events made by SQLite itself, one INSERT ... SELECT over a table of the users (their stream ids, keys
    // and metadata made here) and the rounds: no call per row (a third less CPU than 100-row INSERTs from JS, measured).
    db.exec('CREATE TEMP TABLE seed_users (i INTEGER PRIMARY KEY, stream_id TEXT, stream_key INTEGER, metadata TEXT)');
    db.exec('CREATE TEMP TABLE seed_rounds (n INTEGER PRIMARY KEY)');
    const addUser = db.prepare('INSERT INTO seed_users VALUES (?, ?, ?, ?)');
    const addRound = db.prepare('INSERT INTO seed_rounds VALUES (?)');
    db.transaction(() => {
      for (let u = 0; u < userCount; u++) {
        const stream = streamOf(`seed-user-${u}`);
        addUser.run(u, stream.id, stream.key, stream.metadata);
        revisions.push([stream.id, entries - 1]);
      }
      for (let n = 0; n < entries; n++) addRound.run(n);
    })();
    // Event ids in the form of a version 4 UUID, unique in the file without random bytes: the user's number, the
    // entry's, and one random number of this run (random ids made in SQL cost 45% of this step, measured).
    const salt = Math.floor(Math.random() * 2 ** 48);
    const uuid = `printf('%08x-%04x-4%03x-8%03x-%012x', i, (n >> 24) & 65535, (n >> 12) & 4095, n & 4095, ${salt})`;
    const date = `(${T0} + n * 1000)`;
    const data = `printf('{"itemId":"urn:seed:%d","id":%d,"date":%d,"deleted":false,"deviceId":"seed","lastPlaybackPosition":%d}', n, n + 1, ${date}, ${date} % 3600)`;
    // CROSS JOIN: SQLite keeps the tables' order as written, the left one the outer loop, each scanned by its key.
    const loops = INTERLEAVED ? 'seed_rounds CROSS JOIN seed_users' : 'seed_users CROSS JOIN seed_rounds';
    db.prepare(
      `INSERT INTO events ${COLUMNS} SELECT stream_id, stream_key, n, ${uuid}, 'HistoryItemRecorded', ${data}, metadata, ? FROM ${loops}`,
    ).run(now);
    events += userCount * entries;
    const [first] = db.prepare<[], { event_id: string; data: string }>('SELECT event_id, data FROM events ORDER BY position LIMIT 1').all();
    const expected = template('urn:seed:', 0, 0);
    if (first?.data !== expected || !/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(first.event_id)) {
      throw new Error(`the users' first event is ${JSON.stringify(first)}, not data ${expected} and a UUID`);
    }
    db.exec('DROP TABLE seed_users; DROP TABLE seed_rounds');
  }
  // Readers: items of their own, so no two readers' pages are the same bytes.
  for (let r = 0; r < Number(readers); r++) {
    const stream = streamOf(`bench-reader-${r}`);
    for (let n = 0; n < Number(perReader); n++) event(stream, `urn:reader-${r}:`, n, n);
    if (Number(perReader) > 0) revisions.push([stream.id, Number(perReader) - 1]);
  }
  // One long history: replays of 10,000 items, so each item's entry is recorded again and again.
  const distinct = 10_000;
  if (Number(longEvents) > 0) {
    const stream = streamOf(longUser);
    for (let n = 0; n < Number(longEvents); n++) event(stream, 'urn:long:', n, n % distinct);
    revisions.push([stream.id, Number(longEvents) - 1]);
  }
  flush();
  if (inTransaction > 0) commit.run();
  step('events');
  db.transaction(() => {
    for (const [id, revision] of revisions) setRevision.run(id, revision);
  })();
  step('streams');
  db.exec(indexSql);
  step('index');
  db.pragma('locking_mode = NORMAL');
  db.pragma('journal_mode = WAL');
  db.close();
  step('close');
  process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - started) / 1000, events, steps })}\n`);
}

seed().catch((error) => {
  process.stderr.write(`seed failed: ${error.stack ?? error}\n`);
  process.exitCode = 1;
});
