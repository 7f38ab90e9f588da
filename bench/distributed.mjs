#!/usr/bin/env node
// The distributed mode at a rate: the gateway, history-svc replicas (1, then 3) on one event store file, the
// MongoDB-wire store and real Kafka, writers over 1,000 users (each with its Bearer token), the gateway's connections to
// history-svc shared round-robin over the replicas (as a Kubernetes Service would: per connection).
//   bash tools/servers/with-servers.sh node bench/distributed.mjs [--replicas=1,3] [--rates=25,50,100,200] [--seconds=10] [--direct]
// --direct: straight to the replicas (round robin per request) with the gateway's identity header, no gateway.
// Each replica reaches the store through a counting proxy of its own (the MongoDB wire protocol: one request message
// is one round trip), so the round trips per event are the replicas' own, by command. For each replica count, rates
// are offered in turn (open loop) until one's p99 reaches 100 ms or fails a write; per rate it prints writes/s,
// latency, projection lag (acknowledged writes not yet in the read model, sampled every 250 ms), store round trips
// per applied event, Kafka messages per change, and CPU µs per write of each process (replicas, FerretDB, PostgreSQL,
// Kafka). Bounded: a rate runs `--seconds`, the drain after it at most 30 s; every child is stopped at the end.
// --store=postgres: the replicas' event store and read models on the event store's PostgreSQL of with-servers.sh
// (POSTGRES_URL; a database of their own per replica count, the read models a schema per service in it), each replica
// through a counting proxy of the PostgreSQL protocol (a round trip is a simple query or an extended query's Sync).
// Each replica count ends with one line: `[distributed] store=... replicas=N writes_per_s=... p99_ms=... lag_p99_ms=...
// round_trips_per_event=... gateway_cpu_us_per_write=... lost=...`, the figures of the highest rate sustained (p99 <
// 100 ms, nothing failed, everything applied; the last rate offered when none was), `lost` the acknowledged writes not
// in the read model after the drain, over every rate.
import { execFileSync, spawn } from 'node:child_process';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { SignJWT } from 'jose';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { BENCH_RATE_LIMITS } from './load.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const REPLICAS = arg('replicas', '1,3').split(',').map(Number);
const RATES = arg('rates', '25,50,100,200,400').split(',').map(Number);
const SECONDS = Number(arg('seconds', 10));
const USERS = Number(arg('users', 1000));
const P99_LIMIT_MS = 100;
// --by-collection: round trips per event by command and collection (`find:history_entries`), not by command only.
const detailed = process.argv.includes('--by-collection');
// --every-rate: each rate offered even after one missed the p99 (throughput past the limit, for an A/B on a busy machine).
const everyRate = process.argv.includes('--every-rate');
const direct = process.argv.includes('--direct');
// --profile=DIR: each app process writes a V8 CPU profile there when it stops (node --cpu-prof), named by app.
const PROFILE_DIR = arg('profile', '');
// --store=file (one event store file and the MongoDB-wire store) or --store=postgres (POSTGRES_URL for both).
const STORE = arg('store', 'file');
if (!['file', 'postgres'].includes(STORE)) throw new Error(`--store=${STORE}: file or postgres`);
const TOPIC = 'user-data.history.v1';
const { MONGO_URL, KAFKA_BROKERS, POSTGRES_URL } = process.env;
if (!MONGO_URL || !KAFKA_BROKERS) throw new Error('MONGO_URL / KAFKA_BROKERS unset: run under bash tools/servers/with-servers.sh');
if (STORE === 'postgres' && !POSTGRES_URL)
  throw new Error('--store=postgres: POSTGRES_URL unset (with-servers.sh sets it where PostgreSQL is installed)');
// --store=postgres --readmodels=apart: the read models on another PostgreSQL server (FerretDB's backend, POSTGRES_PORT)
// than the events: their transactions then cannot hold the event feed back (it reads below the oldest transaction open
// on its server, libs/eventstore/src/postgres.ts). Default `same`: the event store's server.
const READMODELS = arg('readmodels', 'same');
if (!['same', 'apart'].includes(READMODELS)) throw new Error(`--readmodels=${READMODELS}: same or apart`);
if (READMODELS === 'apart' && !process.env.POSTGRES_PORT) throw new Error('--readmodels=apart: POSTGRES_PORT unset');

const children = new Set();
const cleanups = [];
const dist = join(root, 'tmp', 'bench-distributed');
execFileSync(process.execPath, [join(root, 'tools', 'build.mjs'), '--outdir', dist, 'history-svc', ...(direct ? [] : ['gateway'])], {
  stdio: 'inherit',
});

// ---------------------------------------------------------------------------------------------- counting proxy --
/** A TCP proxy to the store counting the client's request messages (OP_MSG: opcode 2013) by command name. */
async function countingProxy(target) {
  const counts = new Map();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= 16) {
        const length = pending.readInt32LE(0);
        if (pending.length < length) break;
        const opcode = pending.readInt32LE(12);
        // OP_MSG: flags (4), section kind 0 (1), then the command document: size (4), type (1), the command's name.
        let name = `opcode-${opcode}`;
        if (opcode === 2013 && pending[20] === 0) {
          const end = pending.indexOf(0, 26);
          name = pending.toString('latin1', 26, end);
          // The command's value when a string: the collection (find, update...), named with it as `update:history_entries`.
          if (pending[25] === 2 && detailed) name += `:${pending.toString('latin1', end + 5, end + 4 + pending.readInt32LE(end + 1))}`;
        }
        counts.set(name, (counts.get(name) ?? 0) + 1);
        pending = pending.subarray(length);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    closedTogether(client, upstream);
  });
  const port = await listening(server);
  return {
    url: `mongodb://127.0.0.1:${port}/`,
    take() {
      const snapshot = Object.fromEntries(counts);
      counts.clear();
      return snapshot;
    },
  };
}

/**
 * A TCP proxy to PostgreSQL counting the client's round trips: a simple query ('Q') or the Sync ('S') that ends an
 * extended query (parse, bind, execute... answered together). The first message of a connection (startup, or a
 * request for SSL) has no type byte. Counted by message type, `Q` and `S`; with --by-collection, by the statement's
 * text instead (its first 70 characters, whitespace collapsed: the first Parse or Bind of the round trip, a Bind
 * named by the Parse that made its statement on that connection).
 */
/** The start of the PostgreSQL event store's feed statement (libs/eventstore/src/postgres.ts, `feedQuery`). */
const FEED_STATEMENT = 'SELECT b.blocked, w.*';

async function pgCountingProxy(target) {
  const counts = new Map();
  // Events the feed handed this replica (rows of the feed's statement, an empty page's one row of nulls left out), and
  // history entries its projection wrote (the row counts of its upserts' CommandComplete).
  let feedRows = 0;
  let entryRows = 0;
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    let pending = Buffer.alloc(0);
    let untyped = true;
    const named = new Map();
    let label = null;
    // Per round trip in flight, in order, its statement (answered in order, each answer ending with ReadyForQuery).
    const inFlight = [];
    const cstrings = (from, n) => {
      const out = [];
      for (let at = from; out.length < n;) {
        const end = pending.indexOf(0, at);
        out.push(pending.toString('utf8', at, end));
        at = end + 1;
      }
      return out;
    };
    // A statement's text on one line, whole (what it writes may be named late: a sealed upsert's table), and shortened
    // for a label.
    const oneLine = (sql) => sql.replace(/\s+/g, ' ').trim();
    const short = (sql) => sql.slice(0, 70);
    client.on('data', (chunk) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      for (;;) {
        if (untyped) {
          if (pending.length < 8) break;
          const length = pending.readInt32BE(0);
          if (pending.length < length) break;
          // An SSLRequest (80877103) is followed by another untyped message, the startup; the startup by typed ones.
          untyped = pending.readInt32BE(4) === 80877103;
          pending = pending.subarray(length);
          continue;
        }
        if (pending.length < 5) break;
        const length = pending.readInt32BE(1) + 1;
        if (pending.length < length) break;
        const type = String.fromCharCode(pending[0]);
        if (type === 'P') {
          const [name, sql] = cstrings(5, 2);
          if (name) named.set(name, oneLine(sql));
          label ??= oneLine(sql);
        } else if (type === 'B') label ??= named.get(cstrings(5, 2)[1]) ?? 'bind';
        if (type === 'Q' || type === 'S') {
          const key = detailed ? (type === 'Q' ? short(oneLine(cstrings(5, 1)[0])) : label ? short(label) : 'sync') : type;
          counts.set(key, (counts.get(key) ?? 0) + 1);
          inFlight.push(type === 'S' ? label : null);
          label = null;
        }
        pending = pending.subarray(length);
      }
      upstream.write(chunk);
    });
    let answer = Buffer.alloc(0);
    upstream.on('data', (chunk) => {
      client.write(chunk);
      answer = answer.length ? Buffer.concat([answer, chunk]) : chunk;
      while (answer.length >= 5) {
        const length = answer.readInt32BE(1) + 1;
        if (answer.length < length) break;
        const type = answer[0];
        const statement = inFlight[0] ?? '';
        // DataRow: column count, then each column's length (-1: null); the feed's second column is null on an empty page.
        if (type === 0x44 && statement.startsWith(FEED_STATEMENT)) {
          if (answer.readInt16BE(5) > 1 && answer.readInt32BE(11 + answer.readInt32BE(7)) !== -1) feedRows++;
        } else if (type === 0x43 && writesEntries(statement)) {
          // CommandComplete `INSERT 0 n`, or `SELECT n` for a sealed collection's write (its rows written, and rarely a stale key)
          entryRows += Number(/ (\d+)\0/.exec(answer.toString('latin1', 5, length))?.[1] ?? 0);
        } else if (type === 0x5a) inFlight.shift(); // ReadyForQuery: that round trip is answered
        answer = answer.subarray(length);
      }
    });
    closedTogether(client, upstream);
  });
  const port = await listening(server);
  return {
    port,
    take() {
      const snapshot = Object.fromEntries(counts);
      counts.clear();
      return snapshot;
    },
    /** Events read from the feed and entries written since the last call. */
    takeRows() {
      const rows = { feed: feedRows, entries: entryRows };
      feedRows = 0;
      entryRows = 0;
      return rows;
    },
  };
}

/** A TCP proxy that gives each new connection to the next replica in turn (a Kubernetes Service's share, per connection). */
async function roundRobinProxy(replicas) {
  let next = 0;
  const connections = replicas.map(() => 0);
  const server = createServer((client) => {
    const i = next++ % replicas.length;
    connections[i]++;
    const { hostname, port } = new URL(replicas[i].url);
    const upstream = connect(Number(port), hostname);
    client.pipe(upstream).pipe(client);
    closedTogether(client, upstream);
  });
  return { url: `http://127.0.0.1:${await listening(server)}`, connections };
}

/** A proxied connection's two sockets: either one ending or failing ends both. */
function closedTogether(client, upstream) {
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
}

/** Listens on a free loopback port (closed at the end of the bench); returns the port. */
async function listening(server) {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return server.address().port;
}

// ----------------------------------------------------------------------------------------------------- processes --
/** utime + stime of a process and its children (PostgreSQL's backends), in µs. */
function cpuMicros(pid) {
  const one = (p) => {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // clock ticks: 100 Hz on Linux
    } catch {
      return 0;
    }
  };
  let total = one(pid);
  try {
    for (const child of execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean))
      total += one(Number(child));
  } catch {
    // no children
  }
  return total;
}

/** The process listening on a loopback port (FerretDB, PostgreSQL, Kafka), for its CPU time. */
function listenerPid(port) {
  if (!port) return null;
  const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' });
  const match = /pid=(\d+)/.exec(out);
  return match ? Number(match[1]) : null;
}

/** Items by key (Map.groupBy, which Node 20 lacks). */
function groupBy(items, key) {
  const groups = new Map();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * One of the system's apps from the build, on a port of its own (its logs at warn: no access line per request), ready
 * once `readyPath` answers 200.
 */
async function startApp(name, app, env, readyPath) {
  // The port is free when chosen, but another process may take it before the app binds it: the app then exits, and
  // whoever took the port may answer the ready check. A start whose app is gone just after is made again.
  for (let attempt = 1; ; attempt++) {
    const started = await startAppOnce(name, app, env, readyPath);
    await new Promise((resolve) => setTimeout(resolve, 300));
    if (started.child.exitCode === null) return started;
    if (attempt === 3) throw new Error(`${name} exited just after it answered (${started.child.exitCode}), three times`);
  }
}

async function startAppOnce(name, app, env, readyPath) {
  const port = await freePort();
  const profile = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${app}-${port}.cpuprofile`] : [];
  const child = spawn(process.execPath, [...profile, join(dist, 'apps', app, 'main.js')], {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode})`);
    if (Date.now() > deadline) throw new Error(`${name} not ready after 60 s`);
    const status = await fetch(`${url}${readyPath}`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return { child, url };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A statement that writes history entries: a plain collection's upsert, or a sealed one's (libs/readmodel/src/postgres-sealed.ts). */
const writesEntries = (statement) =>
  (statement.startsWith('INSERT INTO') || statement.startsWith('WITH input AS')) &&
  statement.includes('INSERT INTO') &&
  statement.includes('"history_entries"');

/** A history-svc replica, ready once its /health/ answers 200 (`stores`: MONGO_URL, or EVENTSTORE_URL and READMODEL_URL). */
const startReplica = (settings, stores, index) => startApp(`replica ${index}`, 'history-svc', { ...settings, ...stores }, '/health/');

/**
 * What the bench reads of a run's read models (`<prefix>_history_svc`): in the MongoDB-wire store, or the PostgreSQL
 * schema of that name (a collection is a table of `id, revision, doc jsonb`, libs/readmodel/src/postgres.ts; the
 * entries are sealed there, their `item_id` a keyed hash with the schema's key: libs/readmodel/src/postgres-sealed.ts,
 * whose hash `itemHash` makes the same way).
 */
async function readModelsOf(prefix, postgresUrl) {
  if (!postgresUrl) {
    const mongo = await MongoClient.connect(MONGO_URL);
    const db = mongo.db(`${prefix}_history_svc`);
    return {
      entries: () => db.collection('history_entries').estimatedDocumentCount(),
      segmentOwners: async () =>
        (await db.collection('projection_segments').find({ kind: 'segment' }).toArray()).map((d) => ({ group: d.group, owner: d.owner })),
      countItems: (ids) => db.collection('history_entries').countDocuments({ item_id: { $in: ids } }),
      close: () => mongo.close(),
    };
  }
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  const table = (collection) => `"${prefix}_history_svc"."${collection}"`;
  // Nothing yet before the replicas made the tables.
  const query = (sql, values) =>
    client.query(sql, values).catch((error) => (error.code === '42P01' ? { rows: [] } : Promise.reject(error)));
  return {
    entries: async () => Number((await query(`SELECT count(*) AS n FROM ${table('history_entries')}`)).rows[0]?.n ?? 0),
    segmentOwners: async () =>
      (
        await query(`SELECT doc->>'group' AS group, doc->>'owner' AS owner FROM ${table('projection_segments')} WHERE doc->>'kind' = $1`, [
          'segment',
        ])
      ).rows,
    countItems: async (ids) => {
      // No store key: a build whose entries are not sealed (kept plain).
      const [stored] = (await query(`SELECT key FROM ${table('_store_key')}`)).rows;
      const hashKey = stored && createHmac('sha256', stored.key).update('udp-readmodel-store-hash').digest();
      const itemHash = (id) => createHmac('sha256', hashKey).update(JSON.stringify(id)).digest('base64url').slice(0, 22);
      const hashes = hashKey ? ids.map(itemHash) : ids;
      return Number(
        (await query(`SELECT count(*) AS n FROM ${table('history_entries')} WHERE doc->>'item_id' = ANY($1::text[])`, [hashes])).rows[0]
          ?.n ?? 0,
      );
    },
    close: () => client.end(),
  };
}

/**
 * The gateway in front of history-svc (through `historyUrl`), ready once /livez answers 200; rate limits off. Started a
 * second time if it exits while starting: on a broker started a moment before, its first ListOffsets of a change topic
 * was answered "not the leader" / "does not host this topic-partition", and the gateway exited on it (2 runs in 5 here,
 * 2026-12-05; libs/bus asks again since, this stays for a start that fails otherwise: not what is measured).
 */
async function startGateway(settings, historyUrl) {
  const env = { ...settings, ...BENCH_RATE_LIMITS, HISTORY_SVC_URL: historyUrl };
  try {
    return await startApp('gateway', 'gateway', env, '/livez');
  } catch (error) {
    if (!/exited/.test(error.message)) throw error;
    console.error(`gateway: ${error.message} while starting; starting it again in 2 s`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    return startApp('gateway', 'gateway', env, '/livez');
  }
}

async function stopChild(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

// ------------------------------------------------------------------------------------------------------- writers --
function identityOf(secret) {
  const key = Buffer.from(secret, 'utf8');
  return (userId) => {
    const user = Buffer.from(userId, 'utf8').toString('base64url');
    const expiry = String(Date.now() + 60_000);
    return `v1.${user}.${expiry}.${createHmac('sha256', key).update(`v1.${user}.${expiry}`).digest('base64url')}`;
  };
}

const percentile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

/**
 * Open loop: `rate` writes a second for `seconds`, each to the next user; `to(n, user)` says where write n goes and with
 * which headers (the gateway with the user's token, or the next replica with the identity header).
 */
async function offer(to, users, rate, seconds, state) {
  const latencies = [];
  let failed = 0;
  const total = Math.round(rate * seconds);
  const started = performance.now();
  const inFlight = new Set();
  for (let n = 0; n < total; n++) {
    const due = started + (n * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const user = users[state.next % users.length];
    const { url, headers } = to(state.next, user);
    state.next++;
    const itemId = `urn:bench:${state.next}`;
    const request = (async () => {
      const t0 = performance.now();
      try {
        const res = await fetch(`${url}/api/history/v2`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ item_id: itemId, last_playback_position: 1 }),
          signal: AbortSignal.timeout(30_000),
        });
        await res.arrayBuffer();
        if (res.status === 200) {
          state.acknowledged++;
          state.items.push(itemId);
          latencies.push(performance.now() - t0);
        } else failed++;
      } catch {
        failed++;
      }
    })();
    inFlight.add(request);
    void request.finally(() => inFlight.delete(request));
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    offered: rate,
    done: latencies.length,
    failed,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

// --------------------------------------------------------------------------------------------------------- a run --
async function run(replicaCount) {
  const dir = mkdtempSync(join(tmpdir(), 'udp-bench-distributed-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const prefix = `bench_${randomUUID().slice(0, 8)}`;
  const settings = {
    DATA_DIR: join(dir, 'data'),
    MONGO_DB_PREFIX: prefix,
    KAFKA_BROKERS,
    INTERNAL_AUTH_SECRET: randomBytes(32).toString('base64url'),
  };
  const target = new URL(STORE === 'postgres' ? POSTGRES_URL : MONGO_URL);
  // PostgreSQL: a database of this run's own (created on the primary; the replica gets it too), so a run's projections
  // do not start by applying the events of the run before.
  let postgresUrl = null;
  let readModelsUrl = null;
  /** A database named `prefix` on the server of `serverUrl`; its URL. */
  const database = async (serverUrl) => {
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${prefix}`);
    await admin.end();
    const url = new URL(serverUrl);
    url.pathname = `/${prefix}`;
    return url.href;
  };
  if (STORE === 'postgres') {
    postgresUrl = await database(POSTGRES_URL);
    readModelsUrl =
      READMODELS === 'apart' ? await database(`postgres://postgres@127.0.0.1:${process.env.POSTGRES_PORT}/postgres`) : postgresUrl;
  }
  /** `url` reached through a new counting proxy (counted with the replica's). */
  const proxied = async (url, replica) => {
    const parsed = new URL(url);
    const proxy = await pgCountingProxy({ host: parsed.hostname, port: Number(parsed.port) });
    proxy.replica = replica;
    proxies.push(proxy);
    parsed.host = `127.0.0.1:${proxy.port}`;
    return parsed.href;
  };
  const proxies = [];
  const replicas = [];
  for (let i = 0; i < replicaCount; i++) {
    if (STORE === 'postgres') {
      const events = await proxied(postgresUrl, i);
      const readModels = READMODELS === 'apart' ? await proxied(readModelsUrl, i) : events;
      replicas.push(await startReplica(settings, { EVENTSTORE_URL: events, READMODEL_URL: readModels }, i));
    } else {
      const proxy = await countingProxy({ host: target.hostname, port: Number(target.port) });
      proxies.push(proxy);
      // MONGO_URL's options (with-servers.sh: maxPoolSize, which keeps FerretDB out of its pool deadlock) go along.
      replicas.push(await startReplica(settings, { MONGO_URL: `${proxy.url}${target.search}` }, i));
    }
  }
  const readModels = await readModelsOf(prefix, readModelsUrl);
  const kafka = new Kafka({ clientId: 'bench', brokers: KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
  // Made as the bus makes it (3 partitions) when no replica has published yet.
  const admin = kafka.admin();
  await admin.connect();
  if (!(await admin.listTopics()).includes(TOPIC))
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 3 }], waitForLeaders: true });
  await admin.disconnect();
  const consumer = kafka.consumer({ groupId: `bench-${randomUUID()}` });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: false });
  const users = Array.from({ length: USERS }, (_, i) => `bench-${prefix}-${i}`);
  const ours = new Set(users);
  let published = 0;
  await consumer.run({ eachMessage: async ({ message }) => void (ours.has(message.key?.toString()) && published++) });
  // Segments shared: each replica holds its share before the load starts.
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    // Every group's segments held, each replica holding its fair share of each (the projection's and the publisher's).
    const claims = await readModels.segmentOwners();
    const groups = groupBy(claims, (c) => c.group);
    const balanced = [...groups.values()].every((held) => {
      const byOwner = groupBy(
        held.filter((c) => c.owner),
        (c) => c.owner,
      );
      return byOwner.size === replicaCount && [...byOwner.values()].every((mine) => mine.length >= Math.floor(held.length / replicaCount));
    });
    if (groups.size > 0 && claims.every((c) => c.owner) && balanced) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  // Through the gateway: its connections to history-svc shared round robin over the replicas, a token per user.
  let gateway = null;
  let to;
  if (direct) {
    const sign = identityOf(settings.INTERNAL_AUTH_SECRET);
    to = (n, user) => ({ url: replicas[n % replicas.length].url, headers: { 'x-udp-identity': sign(user) } });
  } else {
    const share = await roundRobinProxy(replicas);
    const jwtSecret = randomBytes(32).toString('base64url');
    gateway = { ...(await startGateway({ ...settings, AUTH_JWT_SECRET: jwtSecret }, share.url)), share };
    const key = new TextEncoder().encode(jwtSecret);
    const tokens = new Map(
      await Promise.all(
        users.map(async (user) => [
          user,
          `Bearer ${await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(user).setIssuedAt().setExpirationTime('2h').sign(key)}`,
        ]),
      ),
    );
    to = (_n, user) => ({ url: gateway.url, headers: { authorization: tokens.get(user) } });
    // Each device's token seen once before the load, as in a steady state (the gateway keeps a verified token: a first
    // verification, jose's HS256 through WebCrypto, costs it about 90-200 µs of CPU).
    for (let i = 0; i < users.length; i += 20)
      await Promise.all(
        users
          .slice(i, i + 20)
          .map((user) =>
            fetch(`${gateway.url}/api/history/v2?limit=1`, { headers: { authorization: tokens.get(user) } }).then((r) => r.arrayBuffer()),
          ),
      );
  }
  const state = { next: 0, acknowledged: 0, items: [] };
  const servers = {
    ...(STORE === 'postgres' ? {} : { ferretdb: listenerPid(target.port) }),
    // The event store's PostgreSQL (--store=postgres), else FerretDB's.
    postgresql: listenerPid(STORE === 'postgres' ? target.port : process.env.POSTGRES_PORT),
    ...(READMODELS === 'apart' ? { 'postgresql-readmodels': listenerPid(process.env.POSTGRES_PORT) } : {}),
    kafka: listenerPid(KAFKA_BROKERS.split(',')[0].split(':')[1]),
  };
  const results = [];
  for (const rate of RATES) {
    for (const p of proxies) {
      p.take();
      p.takeRows?.();
    }
    const entriesBefore = await readModels.entries();
    const publishedBefore = published;
    const acknowledgedBefore = state.acknowledged;
    const cpuBefore = Object.fromEntries([
      ...(gateway ? [['gateway', cpuMicros(gateway.child.pid)]] : []),
      ...replicas.map((r, i) => [`replica-${i}`, cpuMicros(r.child.pid)]),
      ...Object.entries(servers)
        .filter(([, pid]) => pid)
        .map(([name, pid]) => [name, cpuMicros(pid)]),
    ]);
    // Lag: acknowledged writes not yet in the read model, sampled while the load runs.
    const lags = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const applied = (await readModels.entries()) - entriesBefore;
        lags.push(Math.max(0, state.acknowledged - acknowledgedBefore - applied));
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const load = await offer(to, users, rate, SECONDS, state);
    sampling = false;
    await sampler;
    // Drained: every acknowledged write applied and published (at most 30 s).
    const written = state.acknowledged - acknowledgedBefore;
    const drainStart = Date.now();
    let applied = 0;
    while (Date.now() - drainStart < 30_000) {
      applied = (await readModels.entries()) - entriesBefore;
      if (applied >= written && published - publishedBefore >= written) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const drainSeconds = (Date.now() - drainStart) / 1000;
    const cpu = {};
    for (const [name, before] of Object.entries(cpuBefore)) {
      const pid =
        name === 'gateway' ? gateway.child.pid : name.startsWith('replica-') ? replicas[Number(name.slice(8))].child.pid : servers[name];
      cpu[name] = Math.round((cpuMicros(pid) - before) / Math.max(1, written));
    }
    const commands = {};
    for (const p of proxies) for (const [name, n] of Object.entries(p.take())) commands[name] = (commands[name] ?? 0) + n;
    const roundTrips = Object.values(commands).reduce((a, b) => a + b, 0);
    // PostgreSQL: the events each replica's feeds read, and the entries written, per event stored (each replica
    // follows the events with two subscriptions, its projection and its change publisher, of its segments only).
    const rows = replicas.map(() => ({ feed: 0, entries: 0 }));
    for (const p of proxies.filter((p) => p.takeRows)) {
      const { feed, entries } = p.takeRows();
      rows[p.replica].feed += feed;
      rows[p.replica].entries += entries;
    }
    const perEvent = (n) => +(n / Math.max(1, written)).toFixed(2);
    const readPerEvent = STORE === 'postgres' ? rows.map((r) => perEvent(r.feed)) : undefined;
    const appliedPerEvent = STORE === 'postgres' ? perEvent(rows.reduce((sum, r) => sum + r.entries, 0)) : undefined;
    lags.sort((a, b) => a - b);
    const lagP99 = percentile(lags, 99);
    const result = {
      store: STORE,
      replicas: replicaCount,
      via: gateway ? 'gateway' : 'direct',
      ...load,
      written,
      applied,
      storeRoundTripsPerEvent: +(roundTrips / Math.max(1, applied)).toFixed(2),
      byCommand: Object.fromEntries(Object.entries(commands).map(([k, v]) => [k, +(v / Math.max(1, applied)).toFixed(2)])),
      publishedPerChange: +((published - publishedBefore) / Math.max(1, written)).toFixed(3),
      ...(readPerEvent && { feedReadPerEvent: readPerEvent, appliedPerEvent }),
      lagP99Events: lagP99,
      lagP99Seconds: +(lagP99 / Math.max(1, load.perSecond)).toFixed(2),
      drainSeconds,
      cpuMicrosPerWrite: cpu,
      load: +loadavg()[0].toFixed(1),
    };
    results.push(result);
    console.log(
      `replicas=${replicaCount} via=${result.via} offered=${rate}/s done=${load.perSecond.toFixed(0)}/s failed=${load.failed} p50=${load.p50.toFixed(0)}ms ` +
        `p99=${load.p99.toFixed(0)}ms lag_p99=${lagP99} events (~${result.lagP99Seconds} s) drain=${drainSeconds}s ` +
        `store_rt/event=${result.storeRoundTripsPerEvent} ${JSON.stringify(result.byCommand)} published/change=${result.publishedPerChange} ` +
        (readPerEvent ? `feed_read/event=${readPerEvent.join(',')} applied/event=${appliedPerEvent} ` : '') +
        `cpu_us/write=${JSON.stringify(cpu)} load=${result.load}`,
    );
    if (!everyRate && (load.failed > 0 || load.p99 >= P99_LIMIT_MS || applied < written)) break;
  }
  await consumer.disconnect();
  // Lost: acknowledged writes (every rate's) not in the read model after the drains, by their item ids.
  let found = 0;
  for (let i = 0; i < state.items.length; i += 1000) found += await readModels.countItems(state.items.slice(i, i + 1000));
  const lost = state.items.length - found;
  await readModels.close();
  if (gateway) {
    console.log(`replicas=${replicaCount}: the gateway's connections to history-svc by replica: ${gateway.share.connections.join(', ')}`);
    await stopChild(gateway.child);
  }
  for (const r of replicas) await stopChild(r.child);
  const sustained = results.filter((r) => r.failed === 0 && r.p99 < P99_LIMIT_MS && r.applied >= r.written).pop();
  console.log(
    `replicas=${replicaCount} via=${direct ? 'direct' : 'gateway'}: sustained ${sustained ? sustained.perSecond.toFixed(0) : 0} writes/s with p99 < ${P99_LIMIT_MS} ms` +
      (sustained ? ` (offered ${sustained.offered}/s, store round trips per event ${sustained.storeRoundTripsPerEvent})` : ''),
  );
  // The line of this replica count: the highest rate sustained, else the last offered (its figures say why it was not).
  const line = sustained ?? results.at(-1);
  const figure = (value, digits = 0) => (value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits));
  console.log(
    `[distributed] store=${STORE}${READMODELS === 'apart' ? ' readmodels=apart' : ''} replicas=${replicaCount} writes_per_s=${figure(line?.perSecond)} p99_ms=${figure(line?.p99)} ` +
      // The lag is sampled as acknowledged writes not yet in the read model: in ms at the rate written.
      `lag_p99_ms=${figure(line ? line.lagP99Seconds * 1000 : undefined)} round_trips_per_event=${figure(line?.storeRoundTripsPerEvent, 2)} ` +
      `gateway_cpu_us_per_write=${figure(line?.cpuMicrosPerWrite.gateway)} ` +
      (line?.feedReadPerEvent ? `feed_read_per_event=${line.feedReadPerEvent.join(',')} applied_per_event=${line.appliedPerEvent} ` : '') +
      `published_per_change=${figure(line?.publishedPerChange, 2)} lost=${lost}` +
      (sustained ? '' : ' (no rate sustained: the last offered)'),
  );
  return results;
}

const all = [];
try {
  for (const n of REPLICAS) all.push(...(await run(n)));
  console.log(JSON.stringify(all));
} finally {
  for (const child of children) await stopChild(child);
  for (const cleanup of cleanups.reverse()) await cleanup();
}
