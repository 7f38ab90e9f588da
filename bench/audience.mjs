#!/usr/bin/env node
// The bench at audience scale (issue 45): `--users` x `--entries` (100,000 x 100 = 10,000,000 entries) seeded straight
// into history-svc's event file (bench/seed.ts, the users' entries interleaved as a broadcaster's log holds them), the
// embedded system started on it (its read models built by the service at that first start: nothing here depends on
// how they are stored), then every figure with requests spread over the users, so that caches miss as in production:
// each cold request is for a user this process has not read or written before. Beside each, the same workload over
// 200 hot users, and a bare node:http server and an express 5 app answering the same bytes, driven by the same
// generator: wrk for the reads (a Lua script gives each request another user's bearer token), load.mjs's open loop
// for the writes. Ends with one markdown table: figure | hot | cold | bare | express | target | verdict.
//
// `npm run bench` runs it after the 1M part (options there with `--audience-` in front: `--audience-users=10000`);
// `npm run bench -- --audience [options]` runs it alone; so does `node bench/audience.mjs [options]` (after
// `node tools/build.mjs`, on the production Node: `bash bench/on-production-node.sh node bench/audience.mjs ...`).
// Options: --users=100000 --entries=100 --seconds=10 (each hot and baseline read run) --cold-seconds=5 (each cold
// read run: at most as many requests as there are fresh users) --connections=32 --wrk-threads=2 --rate=2000
// --rate-seconds=10 --saturation=6000 --saturation-seconds=5 --singles=200 --pause=10 --start-timeout=1800
// --stop-timeout=600 --seed-order=interleaved|user --rss-guard=<MiB> --profile (cold POSTs and cold pages again in
// a process under --cpu-prof; its hottest functions printed).
// Needs wrk (Debian: `apt-get update && apt-get install -y wrk`): fails at once without it. Loopback only; every loop
// is bounded; every child stopped and the data dir (about 10 GB at 10,000,000 entries) removed at the end, on
// SIGINT/SIGTERM too.
import { spawn, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { SourceMap } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BENCH_RATE_LIMITS, client, openLoop, percentile } from './load.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PAGE = '/api/history/v2?limit=100';
/** Seeded entries' dates (bench/seed.ts): entry n of every user at T0 + n s. */
const T0 = 1_600_000_000_000;
/** A device's poll when nothing changed: `after` is inclusive, so the answer is its newest entry alone. */
const pollPath = (lastUpdate) => `/api/history/v2?with_deleted=true&after=${lastUpdate}&limit=500`;
/** Start with no saved state: 90 s at 10,000,000 entries (the issue's target), the same per entry at another scale. */
const REBUILD_S_PER_ENTRY = 90 / 10_000_000;

export const DEFAULTS = {
  users: 100_000,
  entries: 100,
  seconds: 10,
  'cold-seconds': 5,
  connections: 32,
  'wrk-threads': 2,
  rate: 2000,
  'rate-seconds': 10,
  saturation: 6000,
  'saturation-seconds': 5,
  singles: 200,
  'hot-users': 200,
  pause: 10,
  'start-timeout': 1800,
  'stop-timeout': 600,
  'seed-order': 'interleaved',
  'rss-guard': Math.floor((0.6 * totalmem()) / 2 ** 20),
  profile: false,
};

/** The options from argv: `--<name>=<value>` (`--<prefix><name>=` when run from run.mjs), `--profile` a flag. */
export function audienceOptions(argv, prefix = '') {
  const options = { ...DEFAULTS };
  for (const [name, fallback] of Object.entries(DEFAULTS)) {
    if (typeof fallback === 'boolean') {
      options[name] = argv.includes(`--${prefix}${name}`);
      continue;
    }
    const value = argv.find((a) => a.startsWith(`--${prefix}${name}=`))?.split('=')[1];
    if (value === undefined) continue;
    options[name] = typeof fallback === 'number' ? Number(value) : value;
    if (typeof fallback === 'number' && !(options[name] >= 0)) throw new Error(`--${prefix}${name}=${value}: not a number`);
  }
  if (!['interleaved', 'user'].includes(options['seed-order'])) throw new Error(`--${prefix}seed-order: interleaved or user`);
  if (options.users < 2 * options['hot-users'] + options.singles + 1000) {
    throw new Error(
      `--${prefix}users=${options.users}: at least ${2 * options['hot-users'] + options.singles + 1000} (hot readers, hot writers, singles, 1,000 cold)`,
    );
  }
  if (options.entries < 100) throw new Error(`--${prefix}entries=${options.entries}: at least 100 (a page of 100)`);
  return options;
}

const fmt = (n, d = 1) => (n === undefined || Number.isNaN(n) ? 'n/a' : n.toFixed(d));
const int = (n) => (n === undefined || Number.isNaN(n) ? 'n/a' : Math.round(n).toLocaleString('en-US'));
const mb = (bytes) => `${int(bytes / 1e6)} MB`;
const rssMiB = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  } catch {
    return undefined;
  }
};
/** What a process has read and written so far (/proc/<pid>/io): `rchar`/`wchar` through any file, `write_bytes` to disk. */
const processIo = (pid) => {
  try {
    return Object.fromEntries(
      readFileSync(`/proc/${pid}/io`, 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(': '))
        .map(([k, v]) => [k, Number(v)]),
    );
  } catch {
    return undefined;
  }
};
const gb = (bytes) => (bytes === undefined ? 'n/a' : bytes < 1e9 ? `${int(bytes / 1e6)} MB` : `${fmt(bytes / 1e9, 1)} GB`);
const phase = (name) =>
  process.stderr.write(
    `audience: ${name} (load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})\n`,
  );

/** The wrk script: each thread takes every `threads`-th token of the file, one request per token; done() prints JSON. */
const WRK_TOKENS_LUA = `
-- wrk -s tokens.lua <url> -- <tokens file or -> <path> <threads>: each request sends the next user's token ("-": none).
-- Thread t takes the tokens t, t + threads, ...; a thread that has used its share starts it again (counted: repeats).
local threads = {}
local made = 0
function setup(thread)
  thread:set("id", made)
  made = made + 1
  table.insert(threads, thread)
end
function init(args)
  reqs = {}
  local path, stride = args[2], tonumber(args[3])
  if args[1] == "-" then
    reqs[1] = wrk.format("GET", path)
  else
    local k = 0
    for line in io.lines(args[1]) do
      if k % stride == id then reqs[#reqs + 1] = wrk.format("GET", path, { Authorization = "Bearer " .. line }) end
      k = k + 1
    end
  end
  n = #reqs
  sent = 0
end
function request()
  sent = sent + 1
  return reqs[((sent - 1) % n) + 1]
end
function done(summary, latency, requests)
  local first, all = 0, 0
  for _, t in ipairs(threads) do
    local s, m = t:get("sent"), t:get("n")
    all = all + s
    first = first + math.min(s, m)
  end
  local e = summary.errors
  io.write(string.format('WRK {"requests":%d,"us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p99":%d,"mean":%.1f,"sent":%d,"firstSent":%d}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean, all, first))
end
`;

/** Stops with a clear message when wrk is not there (before anything is seeded). */
export function requireWrk() {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (probe.error) {
    throw new Error(
      `wrk not found (${probe.error.code}): the audience bench drives its reads with wrk, which bare node:http does not saturate. Install it (Debian: apt-get update && apt-get install -y wrk) or leave the part out (--no-audience).`,
    );
  }
  return (probe.stdout + probe.stderr).split('\n')[0].trim();
}

/** HS256 tokens as the gateway's own (tools' SignJWT: sub, iss udp-embedded, exp), signed with DATA_DIR's key. */
function tokenMinter(dataDir) {
  const key = readFileSync(join(dataDir, 'secrets', 'jwt-signing.key'), 'utf8').trim();
  const header = Buffer.from(JSON.stringify({ alg: 'HS256' })).toString('base64url');
  const exp = Math.floor(Date.now() / 1000) + 4 * 3600;
  return (userId) => {
    const payload = Buffer.from(JSON.stringify({ sub: userId, iss: 'udp-embedded', exp })).toString('base64url');
    return `${header}.${payload}.${createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url')}`;
  };
}

/** A shuffle of 0..n-1 by a fixed seed (mulberry32), so runs spread their users alike. */
function shuffled(n, seed = 45) {
  let s = seed;
  const random = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

export async function audience(o) {
  const wrkVersion = requireWrk();
  for (const file of ['dist/embedded/main.js', 'dist/bench/seed.js']) {
    if (!existsSync(join(root, file))) throw new Error(`${file} is missing: run \`node tools/build.mjs\` first`);
  }
  const children = new Set();
  const dataDir = mkdtempSync(join(tmpdir(), 'udp-audience-'));
  let cleaned = false;
  const cleanUp = async () => {
    if (cleaned) return;
    cleaned = true;
    await Promise.all([...children].map((child) => stopChild(child, 'SIGTERM', 30)));
    rmSync(dataDir, { recursive: true, force: true });
  };
  const onSignal = (signal) => {
    process.stderr.write(`audience: ${signal}: stopping the children, removing ${dataDir}\n`);
    cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await measure(o, dataDir, children, wrkVersion);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await cleanUp();
  }
}

/** Stops a child: SIGTERM is a clean stop (history saves its state); SIGKILL after `timeoutS`. Resolves with the ms taken. */
function stopChild(child, signal = 'SIGTERM', timeoutS = 60, system = undefined) {
  if (system) system.stopping = true;
  return new Promise((resolve) => {
    const started = performance.now();
    if (child.exitCode !== null || child.signalCode !== null) return resolve(0);
    const force = setTimeout(() => {
      child.killedAfterTimeout = true;
      child.kill('SIGKILL');
    }, timeoutS * 1000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve(performance.now() - started);
    });
    child.kill(signal);
  });
}

async function measure(o, dataDir, children, wrkVersion) {
  const loadAtStart = loadavg()[0];
  const N = o.users;
  const E = o.entries;
  const totalEntries = N * E;
  const rows = [];
  const notes = [];
  const hotReaders = Array.from({ length: o['hot-users'] }, (_, u) => u);
  const hotWriters = Array.from({ length: o['hot-users'] }, (_, u) => o['hot-users'] + u);
  const userId = (u) => `seed-user-${u}`;

  // ---------- seed ----------
  phase(`seeding ${int(N)} users x ${E} entries (${int(totalEntries)} events, ${o['seed-order']} order) into history-svc's events.sqlite`);
  const eventsFile = join(dataDir, 'history-svc', 'events.sqlite');
  mkdirSync(dirname(eventsFile), { recursive: true });
  const seedRun = spawnSync(
    process.execPath,
    [
      join(root, 'dist', 'bench', 'seed.js'),
      eventsFile,
      String(N),
      String(E),
      'bench-long',
      '0',
      ...(o['seed-order'] === 'interleaved' ? ['--interleaved'] : []),
    ],
    { cwd: root, encoding: 'utf8', maxBuffer: 2 ** 20 },
  );
  if (seedRun.status !== 0) throw new Error(`seed failed (${seedRun.status ?? seedRun.signal}): ${seedRun.stderr.slice(-1000)}`);
  const seeded = JSON.parse(seedRun.stdout);
  const eventsSeeded = statSync(eventsFile).size;
  const stepsText = Object.entries(seeded.steps)
    .map(([name, s]) => `${name} ${fmt(s.seconds)} s (CPU ${fmt(s.cpu)} s)`)
    .join(', ');
  notes.push(
    `Seeded ${int(seeded.events)} events (${int(N)} users x ${E}, ${o['seed-order']} order) in **${fmt(seeded.seconds)} s** (${int(seeded.events / seeded.seconds)} events/s; ${stepsText}); events.sqlite ${mb(eventsSeeded)}.`,
  );

  // ---------- the system's processes ----------
  let logFiles = 0;
  /**
   * Starts dist/embedded/main.js on the data dir and times it to its `gateway on` line; its JSON logs go to a file of
   * the data dir (as a container's stdout to a collector), its stderr is read for the line. `logLevel` null: the
   * default logging, as `npm start` runs it. Given up after `timeoutS` or when its RSS passes the guard.
   */
  const startSystem = async (name, { logLevel = 'warn', timeoutS = o['start-timeout'], nodeArgs = [] } = {}) => {
    phase(`${name}: start (${logLevel ? `LOG_LEVEL=${logLevel}` : 'default logging'})`);
    const logFile = join(dataDir, `system-${++logFiles}.log`);
    const out = openSync(logFile, 'a');
    const env = { ...process.env, ...BENCH_RATE_LIMITS, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' };
    delete env.LOG_LEVEL;
    if (logLevel) env.LOG_LEVEL = logLevel;
    const started = performance.now();
    const child = spawn(process.execPath, [...nodeArgs, join(root, 'dist', 'embedded', 'main.js')], {
      cwd: root,
      env,
      stdio: ['ignore', out, 'pipe'],
    });
    closeSync(out);
    children.add(child);
    child.once('exit', () => children.delete(child));
    const system = { name, child, logFile, peakRss: 0 };
    let stderr = '';
    const sampler = setInterval(() => {
      system.peakRss = Math.max(system.peakRss, rssMiB(child.pid) ?? 0);
      if (system.peakRss > o['rss-guard'] && system.startMs === undefined) {
        system.failure = `RSS passed ${o['rss-guard']} MiB during the start: stopped`;
        child.kill('SIGKILL');
      }
    }, 250);
    child.once('exit', () => clearInterval(sampler));
    const port = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        system.failure ??= `not ready after ${timeoutS} s: stopped`;
        child.kill('SIGKILL');
      }, timeoutS * 1000);
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
        if (stderr.length > 100_000) stderr = stderr.slice(-50_000);
        const ready = /gateway on http:\/\/localhost:(\d+)/.exec(stderr);
        if (ready && system.startMs === undefined) {
          clearTimeout(timer);
          resolve(Number(ready[1]));
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new Error(
            `${name}: the system exited (${code ?? signal}) before it was ready${system.failure ? `: ${system.failure}` : ''}: ${stderr.slice(-1500)}`,
          ),
        );
      });
    });
    system.startMs = performance.now() - started;
    system.io = processIo(child.pid);
    child.once('exit', (code, signal) => {
      if (!system.stopping)
        process.stderr.write(`audience: ${name}: the system exited (${code ?? signal}) while measured: ${stderr.slice(-3000)}\n`);
    });
    system.rss = rssMiB(child.pid);
    system.port = port;
    system.base = `http://127.0.0.1:${port}`;
    return system;
  };
  const filesOf = () => {
    const dir = join(dataDir, 'history-svc');
    const sizes = Object.fromEntries(readdirSync(dir).map((f) => [f, statSync(join(dir, f)).size]));
    const sum = (prefix) =>
      Object.entries(sizes)
        .filter(([f]) => f.startsWith(prefix))
        .reduce((s, [, n]) => s + n, 0);
    return {
      sizes,
      events: sum('events.sqlite'),
      readModels: sum('read-models.'),
      snapshots: sum('snapshots.'),
      text: Object.entries(sizes)
        .map(([f, n]) => `${f} ${mb(n)}`)
        .join(', '),
    };
  };

  // ---------- first start: nothing saved, the read models built from the 10,000,000 events ----------
  const first = await startSystem('first start (no saved state: read models built from the events)');
  const filesAfterFirst = filesOf();
  notes.push(`history-svc's files just after the first start: ${filesAfterFirst.text}.`);
  phase(
    `ready after ${fmt(first.startMs / 1000)} s, RSS ${fmt(first.rss, 0)} MiB; a pause of ${o.pause} s (background work of the start settles)`,
  );
  await new Promise((r) => setTimeout(r, o.pause * 1000));
  const rssAfterPause = rssMiB(first.child.pid);

  const token = tokenMinter(dataDir);
  const auth = (u) => ({ authorization: `Bearer ${token(typeof u === 'number' ? userId(u) : u)}`, 'content-type': 'application/json' });
  // One client (keep-alive agent) per server and size, kept for the whole run: the gateway holds at most 1,000
  // connections of one address (HTTP_MAX_CONNECTIONS_PER_ADDRESS), so a new agent per run would leave too many open.
  const clients = new Map();
  const clientOf = (base, connections) => {
    const key = `${base} ${connections}`;
    if (!clients.has(key)) clients.set(key, client(base, connections));
    return clients.get(key);
  };
  let api = clientOf(first.base, 8);
  const get = async (path, user, expectedEntries) => {
    const res = await api('GET', path, auth(user));
    const body = res.body.toString();
    if (res.status !== 200) throw new Error(`GET ${path} of ${user}: ${res.status} ${body.slice(0, 300)}`);
    const parsed = JSON.parse(body);
    if (expectedEntries !== undefined && parsed.data.length !== expectedEntries) {
      throw new Error(`GET ${path} of ${user}: ${parsed.data.length} entries, not ${expectedEntries}`);
    }
    return { body, parsed };
  };
  // Answers for bare and express: the page and the poll of a hot reader (every seeded user's are the same size: same
  // items, same dates), a write's answer from a user of its own.
  const lastUpdate = T0 + (E - 1) * 1000;
  const samplePage = await get(PAGE, hotReaders[0], 100);
  const samplePoll = await get(pollPath(lastUpdate), hotReaders[0], 1);
  if (samplePoll.parsed.last_update !== lastUpdate)
    throw new Error(`the poll's last_update is ${samplePoll.parsed.last_update}, not ${lastUpdate}`);
  const sampleWrite = await api(
    'POST',
    '/api/history/v2',
    auth('bench-answer'),
    JSON.stringify({ item_id: 'urn:answer', last_playback_position: 1 }),
  );
  if (sampleWrite.status !== 200) throw new Error(`POST: ${sampleWrite.status} ${sampleWrite.body}`);
  const answers = (page) => {
    const file = join(dataDir, `answers-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify({ pages: { any: page }, other: sampleWrite.body.toString() }));
    return file;
  };
  const startBaseline = async (script, answersFile) => {
    const child = spawn(process.execPath, [join(root, 'bench', script), answersFile], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    children.add(child);
    child.once('exit', () => children.delete(child));
    const port = await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c) => {
        out += c;
        const m = /^(\d+)\n/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`${script} exited (${code})`)));
    });
    return { child, base: `http://127.0.0.1:${port}` };
  };
  const pageFile = answers(samplePage.body);
  const pollFile = answers(samplePoll.body);
  const baselines = {
    page: { bare: await startBaseline('bare-server.mjs', pageFile), express: await startBaseline('express-server.mjs', pageFile) },
    poll: { bare: await startBaseline('bare-server.mjs', pollFile), express: await startBaseline('express-server.mjs', pollFile) },
  };

  // ---------- users: hot ones, and fresh ones taken in a shuffled order, each at most once while there are any ----------
  const cold = shuffled(N - 2 * o['hot-users']).map((i) => i + 2 * o['hot-users']);
  /** Per user: 0 not touched yet, 1 read, 2 written. */
  const touched = new Uint8Array(N);
  /**
   * `k` users not read or written before (in the shuffled order); when none are left, users only read before, then
   * users written before (counted: `reused`, of which `written`).
   */
  const fresh = (k) => {
    const users = [];
    for (const level of [0, 1, 2]) {
      for (let i = 0; i < cold.length && users.length < k; i++) if (touched[cold[i]] === level) users.push(cold[i]);
    }
    let written = 0;
    for (const u of users) if (touched[u] === 2) written++;
    return { users, reused: users.filter((u) => touched[u] > 0).length, written };
  };
  const touch = (users, level) => {
    for (const u of users) touched[u] = Math.max(touched[u], level);
  };
  // The cold users of the one-at-a-time POSTs, set aside before any other workload takes them.
  const singleCold = fresh(o.singles);
  touch(singleCold.users, 2);
  const tokensFile = (users) => {
    const file = join(dataDir, `tokens-${Math.random().toString(36).slice(2)}.txt`);
    writeFileSync(file, `${users.map((u) => token(userId(u))).join('\n')}\n`);
    return file;
  };
  const luaFile = join(dataDir, 'tokens.lua');
  writeFileSync(luaFile, WRK_TOKENS_LUA);

  /** wrk for `seconds` against `base` + `path`, each request with the next token of `file` ('-': no token). */
  const wrk = (base, path, file, seconds) =>
    new Promise((resolve, reject) => {
      const args = ['-t', String(o['wrk-threads']), '-c', String(o.connections), '-d', `${seconds}s`, '--timeout', '10s'];
      const child = spawn('wrk', [...args, '-s', luaFile, `${base}${path}`, '--', file, path, String(o['wrk-threads'])], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.add(child);
      let out = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (out += c));
      child.once('exit', (code) => {
        children.delete(child);
        const m = /^WRK (\{.*\})$/m.exec(out);
        if (code !== 0 || !m) return reject(new Error(`wrk exited (${code}): ${out.slice(-1500)}`));
        const r = JSON.parse(m[1]);
        r.rps = r.requests / (r.us / 1e6);
        r.errors = r.connect + r.read + r.write + r.status + r.timeout;
        r.bytesPer = r.bytes / Math.max(1, r.requests);
        resolve(r);
      });
    });
  const readRun = async (label, base, path, file, seconds) => {
    phase(`${label}, wrk ${seconds} s`);
    const r = await wrk(base, path, file, seconds);
    if (r.errors)
      throw new Error(
        `${label}: wrk saw ${r.errors} errors (${r.status} non-2xx/3xx, ${r.timeout} timeouts, ${r.connect + r.read + r.write} socket errors)`,
      );
    return r;
  };
  /** A cold read: wrk over fresh users' tokens; the users it reached are touched, and how many were read before is told. */
  const coldReadRun = async (label, base, path, seconds) => {
    const pool = fresh(cold.length);
    const file = tokensFile(pool.users);
    const r = await readRun(label, base, path, file, seconds);
    // Thread t used tokens t, t + threads, ...: about the first `sent` of the file (the rest stay fresh).
    const used = Math.min(r.sent, pool.users.length);
    touch(pool.users.slice(0, used), 1);
    const before = Math.max(0, used - (pool.users.length - pool.reused));
    r.readBefore = before + (r.sent - r.firstSent);
    r.distinct = used;
    rmSync(file, { force: true });
    return r;
  };
  const readText = (r, ofBare) =>
    `${int(r.rps)} req/s${ofBare ? ` = ${fmt(r.rps / ofBare.rps, 3)} of bare` : ''}, p50 ${fmt(r.p50 / 1000, 2)} / p99 ${fmt(r.p99 / 1000, 1)} ms`;

  // ---------- GET page of 100 ----------
  const hotReadersFile = tokensFile(hotReaders);
  const warmReaders = async () => {
    for (const u of hotReaders) await get(PAGE, u, 100);
  };
  await warmReaders();
  const page = {};
  page.wrkStatic = await readRun(
    'page: bare node:http, wrk without a script token (its own ceiling)',
    baselines.page.bare.base,
    PAGE,
    '-',
    o.seconds,
  );
  page.bare = await readRun('page: bare node:http, token script', baselines.page.bare.base, PAGE, hotReadersFile, o.seconds);
  page.express = await readRun('page: express 5, token script', baselines.page.express.base, PAGE, hotReadersFile, o.seconds);
  page.cold = await coldReadRun('page: gateway, users not read before', first.base, PAGE, o['cold-seconds']);
  page.hot = await readRun(`page: gateway, ${hotReaders.length} hot users`, first.base, PAGE, hotReadersFile, o.seconds);

  // ---------- the quiet poll ----------
  const warmPollers = async () => {
    for (const u of hotReaders) await get(pollPath(lastUpdate), u, 1);
  };
  await warmPollers();
  const poll = {};
  poll.bare = await readRun(
    'poll: bare node:http, token script',
    baselines.poll.bare.base,
    pollPath(lastUpdate),
    hotReadersFile,
    o.seconds,
  );
  poll.express = await readRun(
    'poll: express 5, token script',
    baselines.poll.express.base,
    pollPath(lastUpdate),
    hotReadersFile,
    o.seconds,
  );
  poll.cold = await coldReadRun('poll: gateway, users not read before', first.base, pollPath(lastUpdate), o['cold-seconds']);
  poll.hot = await readRun(`poll: gateway, ${hotReaders.length} hot users`, first.base, pollPath(lastUpdate), hotReadersFile, o.seconds);
  for (const [name, base] of Object.entries({ bare: baselines.poll.bare.child, express: baselines.poll.express.child })) {
    await stopChild(base);
    delete baselines.poll[name];
  }

  // ---------- POST, open loop ----------
  /** Writes acknowledged by the gateway (1 for the answer's sample, the hot writers' warm-up, the singles, the batch). */
  let writes = 1 + hotWriters.length + 2 * o.singles + 3000;
  const body = (i) => JSON.stringify({ item_id: `urn:audience:${i}`, last_playback_position: i % 600 });
  /** `total` POSTs at `rate`/s to `base`, request i for `users[i % users.length]`; statuses counted, 429 apart. */
  const postRun = async (label, base, users, rate, total) => {
    phase(`${label}: ${int(total)} POSTs at ${int(rate)}/s offered, open loop`);
    const headers = users.map((u) => auth(u));
    const send = clientOf(base, 256);
    let firstRefusal;
    const run = await openLoop(
      (i) =>
        send('POST', '/api/history/v2', headers[i % headers.length], body(i)).then((res) => {
          if (res.status >= 300 && res.status !== 429 && firstRefusal === undefined) {
            firstRefusal = `${res.status}: ${res.body.toString().slice(0, 200)}`;
          }
          return res;
        }),
      total,
      rate,
    );
    const count = (test) =>
      Object.entries(run.statuses)
        .filter(([s]) => test(s))
        .reduce((sum, [, n]) => sum + n, 0);
    const ok = count((s) => s.startsWith('2'));
    if (base !== baselines.page.bare.base && base !== baselines.page.express.base) writes += ok;
    return {
      served: ok / run.seconds,
      p50: percentile(run.latencies, 50),
      p99: percentile(run.latencies, 99),
      non2xx: total - ok - (run.statuses[429] ?? 0),
      r429: run.statuses[429] ?? 0,
      statuses: run.statuses,
      firstRefusal,
      offered: rate,
    };
  };
  const warmWriters = async () => {
    for (const u of hotWriters) {
      const res = await api('POST', '/api/history/v2', auth(u), body(2_000_000 + u));
      if (res.status !== 200) throw new Error(`warm-up POST of ${userId(u)}: ${res.status}`);
    }
  };
  await warmWriters();
  const writeAt = async (rate, seconds) => {
    const total = Math.round(rate * seconds);
    const fixed = {};
    fixed.bare = await postRun('bare node:http', baselines.page.bare.base, hotWriters, rate, total);
    fixed.express = await postRun('express 5', baselines.page.express.base, hotWriters, rate, total);
    const pool = fresh(total);
    fixed.cold = await postRun('gateway, each POST for a user not read or written before', first.base, pool.users, rate, total);
    fixed.cold.reused = pool.reused;
    fixed.cold.written = pool.written;
    touch(pool.users, 2);
    fixed.hot = await postRun(`gateway, ${hotWriters.length} hot users`, first.base, hotWriters, rate, total);
    return fixed;
  };
  const fixedRate = await writeAt(o.rate, o['rate-seconds']);
  const saturation = await writeAt(o.saturation, o['saturation-seconds']);
  // The open loop's own ceiling: twice the saturation rate offered to bare for 2 s.
  const generatorCeiling = await postRun(
    "the open loop's own ceiling: bare node:http",
    baselines.page.bare.base,
    hotWriters,
    2 * o.saturation,
    4 * o.saturation,
  );

  // ---------- one POST at a time: a cold user's against a hot one's ----------
  phase(`${o.singles} POSTs one at a time for cold users and ${o.singles} for hot ones, alternately; bare and express as many`);
  const one = async (base, user, i) => {
    const send = clientOf(base, 1);
    const res = await send('POST', '/api/history/v2', auth(user), body(i)).catch((error) => {
      throw new Error(`one POST to ${base}: ${error.message}`);
    });
    if (res.status !== 200) throw new Error(`one POST of ${user} to ${base}: ${res.status} ${res.body.toString().slice(0, 200)}`);
    return res.ms;
  };
  const singles = { cold: [], hot: [], bare: [], express: [] };
  const gatewayOne = clientOf(first.base, 1);
  const timed = async (user, i) => {
    const res = await gatewayOne('POST', '/api/history/v2', auth(user), body(i)).catch((error) => {
      throw new Error(`one POST of ${user} to the gateway: ${error.message}`);
    });
    if (res.status !== 200) throw new Error(`one POST of ${user}: ${res.status} ${res.body.toString().slice(0, 200)}`);
    return res.ms;
  };
  for (let i = 0; i < o.singles; i++) {
    singles.cold.push(await timed(singleCold.users[i], 1_000_000 + i));
    singles.hot.push(await timed(hotWriters[i % hotWriters.length], 1_000_000 + i));
  }
  for (let i = 0; i < o.singles; i++) {
    singles.bare.push(await one(baselines.page.bare.base, hotWriters[i % hotWriters.length], i));
    singles.express.push(await one(baselines.page.express.base, hotWriters[i % hotWriters.length], i));
  }
  const p50 = Object.fromEntries(Object.entries(singles).map(([k, v]) => [k, percentile(v, 50)]));
  const p99of = Object.fromEntries(Object.entries(singles).map(([k, v]) => [k, percentile(v, 99)]));

  // ---------- mobile sync: a new device's 3,000-entry push, then its pull by 500 ----------
  phase('mobile sync: 3,000-entry push + pull by 500');
  const syncItems = Array.from({ length: 3000 }, (_, i) => ({
    item_id: `urn:episode:${i}`,
    date: 1_700_000_000_000 + (i % 700) * 1000,
    last_playback_position: i,
  }));
  const syncStarted = performance.now();
  const pushed = await api('POST', '/api/history/v2/batch', auth('bench-mobile'), JSON.stringify({ data: syncItems }));
  const pushMs = performance.now() - syncStarted;
  let pulled = 0;
  let pulls = 0;
  let next = '?limit=500';
  while (next && pulls < 20) {
    const res = await api('GET', `/api/history/v2${next}`, auth('bench-mobile'));
    const parsed = JSON.parse(res.body);
    pulled += parsed.data.length;
    pulls++;
    next = parsed.next;
  }
  const syncMs = performance.now() - syncStarted;
  if (pushed.status !== 204 || pulled !== 3000) throw new Error(`mobile sync failed: push ${pushed.status}, pulled ${pulled}`);

  const rssAfterLoad = rssMiB(first.child.pid);
  const peakFirst = Math.max(first.peakRss, rssAfterLoad ?? 0);
  phase('clean stop (SIGTERM: history saves its state)');
  const stopMs = await stopChild(first.child, 'SIGTERM', o['stop-timeout'], first);
  if (first.child.killedAfterTimeout)
    notes.push(`**The clean stop did not end within ${o['stop-timeout']} s: SIGKILLed** (the next start is not after a clean stop).`);
  const files = filesOf();
  notes.push(`history-svc's files after the clean stop (${fmt(stopMs / 1000, 1)} s): ${files.text}.`);

  // ---------- start after a clean stop, with the default logging of `npm start` ----------
  const second = await startSystem('start after a clean stop', { logLevel: null });
  api = clientOf(second.base, 8);
  const logBefore = statSync(second.logFile).size;
  await warmReaders();
  const logged = {};
  logged.wrkStatic = await readRun(
    'page again: bare node:http, wrk without a token script',
    baselines.page.bare.base,
    PAGE,
    '-',
    o.seconds,
  );
  logged.bare = await readRun('page again: bare node:http, token script', baselines.page.bare.base, PAGE, hotReadersFile, o.seconds);
  const logAtRun = statSync(second.logFile).size;
  logged.hot = await readRun(
    `page: gateway with the default logging, ${hotReaders.length} hot users`,
    second.base,
    PAGE,
    hotReadersFile,
    o.seconds,
  );
  await new Promise((r) => setTimeout(r, 500));
  const logBytesPer = (statSync(second.logFile).size - logAtRun) / Math.max(1, logged.hot.requests);
  notes.push(
    `The start after the clean stop ran with the default logging (no LOG_LEVEL, JSON lines to a file, as \`npm start\` writes them anywhere but a terminal): ${int(logAtRun - logBefore)} bytes logged during the warm-up, ${int(logBytesPer)} bytes of log per request during the hot page.`,
  );
  const secondRssAfter = rssMiB(second.child.pid);
  await stopChild(second.child, 'SIGTERM', o['stop-timeout'], second);

  // ---------- a profile of cold requests, on demand ----------
  let profile;
  if (o.profile) profile = await profileCold();
  async function profileCold() {
    const dir = join(dataDir, 'profiles');
    const out = {};
    for (const kind of ['post', 'page']) {
      const system = await startSystem(`profile of cold ${kind}s (--cpu-prof)`, {
        nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${join(dir, kind)}`],
      });
      api = clientOf(system.base, 8);
      const from = process.hrtime.bigint() / 1000n;
      // A new process: every user is cold in its caches (the OS may still hold their pages, as in production).
      if (kind === 'post') {
        const pool = fresh(Math.round(o.rate * o['cold-seconds']));
        touch(pool.users, 2);
        out.post = await postRun('profile: cold POSTs', system.base, pool.users, o.rate, pool.users.length);
      } else {
        out.page = await coldReadRun('profile: cold pages', system.base, PAGE, o['cold-seconds']);
      }
      const to = process.hrtime.bigint() / 1000n;
      await stopChild(system.child, 'SIGTERM', o['stop-timeout'], system);
      out[`${kind}Top`] = topFunctions(join(dir, kind), Number(from), Number(to));
    }
    return out;
  }

  // ---------- the table ----------
  const verdict = (ok) => (ok === undefined ? '' : ok ? 'met' : 'NOT met');
  const row = (figure, hot, coldText, bare, express, target, ok) =>
    rows.push(`| ${figure} | ${hot} | ${coldText} | ${bare} | ${express} | ${target} | ${verdict(ok)} |`);
  const postText = (r) =>
    `served ${int(r.served)}/s, p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms, ${r.non2xx} non-2xx${r.r429 ? `, ${r.r429} × 429 (apart)` : ''}${r.firstRefusal ? ` (first: ${r.firstRefusal.replace(/\|/g, '/')})` : ''}`;
  const reusedText = (r) =>
    r.reused ? `; ${int(r.reused)} of its users touched before (${int(r.written)} of them written): no fresh ones left` : '';
  const coldReadText = (r) =>
    `${r.readBefore ? `; ${int(r.readBefore)} of ${int(r.sent)} requests for users read before (no fresh ones left)` : `; ${int(r.distinct)} users, each read once`}`;
  const generatorFlag = (r) =>
    r.served < 0.98 * r.offered
      ? ' (**the generator did not reach the offered rate**)'
      : r.p50 > 5
        ? ` (**the generator lags**: bare's p50 ${fmt(r.p50)} ms from the scheduled start)`
        : '';

  row(
    `seeding ${int(seeded.events)} events straight into events.sqlite (bench/seed.ts)`,
    '—',
    `**${fmt(seeded.seconds)} s** (${int(seeded.events / seeded.seconds)} events/s)`,
    '—',
    '—',
    'fast (minutes)',
    undefined,
  );
  row(
    `POST /api/history/v2 at ${int(o.rate)}/s offered, open loop (load.mjs), ${int(o.rate * o['rate-seconds'])} requests; cold: each for a user not touched before; hot: over ${hotWriters.length} users`,
    postText(fixedRate.hot),
    `**${postText(fixedRate.cold)}**${reusedText(fixedRate.cold)}`,
    `${postText(fixedRate.bare)}${generatorFlag(fixedRate.bare)}`,
    postText(fixedRate.express),
    'p99 < 50 ms, 0 non-2xx (429 apart)',
    fixedRate.cold.p99 < 50 && fixedRate.cold.non2xx === 0,
  );
  row(
    `POST at saturation: ${int(o.saturation)}/s offered, ${int(o.saturation * o['saturation-seconds'])} requests, as above`,
    postText(saturation.hot),
    `**${postText(saturation.cold)}**${reusedText(saturation.cold)}`,
    `${postText(saturation.bare)}${generatorFlag(saturation.bare)}`,
    postText(saturation.express),
    '≥ 4,000/s served',
    saturation.cold.served >= 4000,
  );
  row(
    `one POST at a time (${o.singles} each, cold and hot alternately; client-side ms)`,
    `p50 ${fmt(p50.hot, 2)} ms (p99 ${fmt(p99of.hot, 1)})`,
    `**p50 ${fmt(p50.cold, 2)} ms** (p99 ${fmt(p99of.cold, 1)}) = **${fmt(p50.cold / p50.hot, 2)}×** hot`,
    `p50 ${fmt(p50.bare, 2)} ms`,
    `p50 ${fmt(p50.express, 2)} ms`,
    'cold within 20% of hot',
    p50.cold <= 1.2 * p50.hot,
  );
  row(
    `GET ${PAGE} (${int(page.bare.bytesPer)} bytes a response), wrk ${o['wrk-threads']} threads ${o.connections} connections, each request another user's token; cold ${o['cold-seconds']} s: users not read before; hot ${o.seconds} s: ${hotReaders.length} users; LOG_LEVEL=warn`,
    readText(page.hot, page.bare),
    `**${readText(page.cold, page.bare)}**${coldReadText(page.cold)}`,
    `${int(page.bare.rps)} req/s (same script)`,
    `${int(page.express.rps)} req/s = ${fmt(page.express.rps / page.bare.rps, 3)} of bare`,
    'cold ≥ 0.15 of bare',
    page.cold.rps / page.bare.rps >= 0.15,
  );
  row(
    `the hot page with the default logging (as \`npm start\`; after the clean-stop start), ${hotReaders.length} users, wrk as above`,
    `**${readText(logged.hot, logged.bare)}** (${fmt(logged.hot.rps / logged.wrkStatic.rps, 3)} of wrk's bare without a script)`,
    '—',
    `${int(logged.bare.rps)} req/s (same script, right before)`,
    '—',
    "≥ 0.3 of wrk's bare",
    logged.hot.rps / logged.bare.rps >= 0.3,
  );
  row(
    "wrk's own ceiling: bare node:http's page, wrk with no script (one request made once) against the token script",
    '—',
    '—',
    `no script ${int(page.wrkStatic.rps)} req/s, token script ${int(page.bare.rps)} req/s (${fmt(page.bare.rps / page.wrkStatic.rps, 2)}); again later: ${int(logged.wrkStatic.rps)} / ${int(logged.bare.rps)}`,
    '—',
    'bare not saturated by the generator (65,000+ req/s here)',
    undefined,
  );
  row(
    "the open loop's own ceiling (load.mjs, in the bench's process): bare node:http's write answer",
    '—',
    '—',
    `${int(generatorCeiling.offered)}/s offered: ${postText(generatorCeiling)}`,
    '—',
    `≥ ${int(o.saturation)}/s (the saturation row's offer)`,
    generatorCeiling.served >= 0.98 * o.saturation,
  );
  row(
    `quiet poll: GET ${pollPath('<last_update>')} (one-entry page, ${int(poll.bare.bytesPer)} bytes a response), as the page`,
    readText(poll.hot, poll.bare),
    `**${readText(poll.cold, poll.bare)}**${coldReadText(poll.cold)}`,
    `${int(poll.bare.rps)} req/s`,
    `${int(poll.express.rps)} req/s = ${fmt(poll.express.rps / poll.bare.rps, 3)} of bare`,
    'of bare ≥ 0.4 (issue 28)',
    poll.cold.rps / poll.bare.rps >= 0.4,
  );
  row(
    'mobile sync: a new device pushes 3,000 entries (POST /api/history/v2/batch), pulls them by 500',
    '—',
    `**${fmt(syncMs, 0)} ms** (push ${fmt(pushMs, 0)} ms + ${pulls} pages)`,
    '—',
    '—',
    '< 100 ms (issue 28)',
    syncMs < 100,
  );
  const rebuildTarget = REBUILD_S_PER_ENTRY * totalEntries;
  row(
    `start with no saved state (the first start after seeding: read models built from ${int(seeded.events)} events; spawn to "gateway on")`,
    '—',
    `**${fmt(first.startMs / 1000, 1)} s** (RSS ${fmt(first.rss, 0)} MiB just after, ${fmt(rssAfterPause, 0)} after the ${o.pause} s pause, peak ${fmt(peakFirst, 0)}; the process wrote ${gb(first.io?.write_bytes)} to disk and read ${gb(first.io?.rchar)} through its files, ${int(first.io?.write_bytes / seeded.events)} bytes written an event)`,
    '—',
    '—',
    `< ${fmt(rebuildTarget, rebuildTarget < 10 ? 1 : 0)} s${totalEntries === 10_000_000 ? '' : ' (90 s at 10,000,000, as much per entry)'}`,
    first.startMs / 1000 < rebuildTarget,
  );
  row(
    `start after a clean stop (the stop took ${fmt(stopMs / 1000, 1)} s)`,
    '—',
    `**${fmt(second.startMs / 1000, 2)} s** (read ${gb(second.io?.rchar)}, wrote ${gb(second.io?.wchar)} through its files)`,
    '—',
    '—',
    '< 1 s',
    second.startMs < 1000 && !first.child.killedAfterTimeout,
  );
  row(
    `RSS just after the start after a clean stop (${int(totalEntries)} entries)`,
    '—',
    `**${fmt(second.rss, 0)} MiB** (after its hot page: ${fmt(secondRssAfter, 0)}; the first process after its load: ${fmt(rssAfterLoad, 0)})`,
    '—',
    '—',
    '< 300 MiB',
    second.rss < 300,
  );
  // Each write through the gateway is one more event and entry (an entry written again is one more event).
  const entriesNow = totalEntries + writes;
  row(
    'events file (events.sqlite with its -wal), after the clean stop',
    '—',
    `**${mb(files.events)}** = ${int(files.events / entriesNow)} bytes an entry (${int(eventsSeeded / totalEntries)} as seeded)`,
    '—',
    '—',
    '—',
    undefined,
  );
  row(
    'read-models file (read-models.* with its -wal), after the clean stop',
    '—',
    `**${mb(files.readModels)}** = ${int(files.readModels / entriesNow)} bytes an entry = **${fmt(files.readModels / files.events, 2)}×** the events file${files.snapshots ? `; snapshots ${mb(files.snapshots)}` : ''}`,
    '—',
    '—',
    '≤ 2× the event log',
    files.readModels <= 2 * files.events,
  );
  if (profile) {
    notes.push(
      `Profile (--profile; a process started for it, so every user is cold in its caches), cold POSTs at ${int(o.rate)}/s (${postText(profile.post)}), the hottest functions by self time: ${profile.postTop}.`,
      `Profile, cold pages (${readText(profile.page)}): ${profile.pageTop}.`,
    );
  }
  notes.push(
    `Generators: wrk (${wrkVersion}) for the reads, ${o['wrk-threads']} threads, ${o.connections} connections, a Lua script giving each request the next user's token; load.mjs's open loop (256 sockets) for the writes. Baselines: bench/bare-server.mjs and bench/express-server.mjs answering the gateway's own page, poll and write bytes whatever the token.`,
    `Cold = a user this process had not read or written before (${int(N - 2 * o['hot-users'])} such users, taken in a shuffled order); hot = ${hotReaders.length} readers (seed-user-0..${hotReaders.length - 1}) and ${hotWriters.length} writers, each read or written once before the run.`,
  );
  const load = loadavg()[0];
  return [
    `audience scale: ${int(N)} users x ${E} entries (${int(totalEntries)}), embedded mode, loopback, node ${process.version}, load average ${fmt(loadAtStart)} at start, ${fmt(load)} at end`,
    '',
    '| figure | hot | cold | bare | express | target | verdict |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    ...notes.map((n) => `- ${n}`),
  ];
}

/**
 * Where a profiled process spent its time between `from` and `to` (µs of the monotonic clock, as V8 stamps its
 * samples and process.hrtime reads it): the 12 functions of its main thread with the most self time, as
 * `name (source:line) n%` of the main thread's samples that were not idle, each place mapped through the bundle's
 * source map to our sources; then how busy each worker thread was.
 */
function topFunctions(dir, from, to) {
  const maps = new Map();
  const place = (url, line, column) => {
    const path = url.startsWith('file://') ? fileURLToPath(url) : url;
    if (!maps.has(path)) {
      let map;
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
      } catch {
        map = undefined;
      }
      maps.set(path, map);
    }
    const entry = maps.get(path)?.findEntry(line, column);
    if (entry?.originalSource) {
      // Sources as the map names them, relative to the bundle: shown from the repository's root when inside it.
      const source = entry.originalSource.startsWith('file://')
        ? fileURLToPath(entry.originalSource)
        : resolve(dirname(path), entry.originalSource);
      const shown = source.startsWith(`${root}/`) ? source.slice(root.length + 1) : entry.originalSource;
      return { where: `${shown}:${entry.originalLine + 1}`, name: entry.name };
    }
    return { where: path ? `${path.split('/').slice(-2).join('/')}:${line + 1}` : '' };
  };
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')) : [];
  const threads = [];
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map();
    let busy = 0;
    let all = 0;
    let at = profile.startTime;
    profile.samples.forEach((id, i) => {
      const dt = profile.timeDeltas[i] ?? 0;
      at += dt;
      if (at < from || at > to) return;
      all += dt;
      const { functionName, url, lineNumber, columnNumber } = nodes.get(id).callFrame;
      if (functionName === '(idle)') return;
      busy += dt;
      const { where, name } = url ? place(url, lineNumber, columnNumber) : { where: '' };
      const key = `${functionName || name || '(anonymous)'}${where ? ` (${where})` : ''}`;
      self.set(key, (self.get(key) ?? 0) + dt);
    });
    // CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile: thread 0 is the main thread.
    threads.push({ main: file.split('.')[4] === '0', self, busy, all });
  }
  const main = threads.find((t) => t.main);
  if (!main || main.busy === 0) return 'no profile samples in the window';
  const top = [...main.self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)
    .map(([key, t]) => `${key} ${fmt((100 * t) / main.busy)}%`)
    .join('; ');
  const workers = threads
    .filter((t) => !t.main && t.all > 0 && t.busy / t.all >= 0.01)
    .map((t) => `${fmt((100 * t.busy) / t.all, 0)}%`)
    .join(', ');
  return `main thread busy ${fmt((100 * main.busy) / main.all, 0)}% of the window; ${top}${workers ? `; worker threads busy (those above 1%): ${workers}` : ''}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  audience(audienceOptions(process.argv.slice(2)))
    .then((lines) => process.stdout.write(`${lines.join('\n')}\n`))
    .catch((error) => {
      process.stderr.write(`audience bench failed: ${error.stack ?? error}\n`);
      process.exitCode = 1;
    });
}
