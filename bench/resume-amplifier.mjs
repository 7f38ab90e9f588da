// Resumes from an old cursor beside other users' reads (docs/live-sync.md, "Cursors and resuming"): one user with
// ENTRIES history entries keeps STREAMS streams resuming, each from a cursor of their empty history, in a loop (each
// reopened as soon as it ends), while other users read their page at a fixed offered rate. Prints the readers' p99
// without and with the resumes, and how many changes the resumes were sent.
//   node tools/build.mjs && node bench/resume-amplifier.mjs [ENTRIES=50000] [STREAMS=10] [seconds=10]
// The system runs with its default rate limits (the resumes are charged to their user); the readers are 20 users.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { client, openLoop, percentile, untilLive } from './load.mjs';

const ENTRIES = Number(process.argv[2] ?? 50_000);
const STREAMS = Number(process.argv[3] ?? 10);
const SECONDS = Number(process.argv[4] ?? 10);
const RATE = 200;
const READERS = 20;
const root = join(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const { SignJWT } = require('jose');

const dataDir = mkdtempSync(join(tmpdir(), 'udp-resume-amplifier-'));
const port = 19000 + Math.floor(Math.random() * 1000);
const child = spawn(process.execPath, [join(root, 'dist', 'embedded', 'main.js')], {
  env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'pipe'],
});
child.stderr.on('data', () => {});
process.on('exit', () => {
  child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});
const base = `http://127.0.0.1:${port}`;
await untilLive(base);
const secret = new TextEncoder().encode(readFileSync(join(dataDir, 'secrets', 'jwt-signing.key'), 'utf8').trim());
const token = async (user) =>
  `Bearer ${await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(user).setIssuer('udp-embedded').setIssuedAt().setExpirationTime('1h').sign(secret)}`;
const request = client(base, 32);

/** Reads one stream to its end, or to `ready`; answers its last event's name and how many changes it carried. */
function readStream(authorization, lastEventId, agent) {
  return new Promise((resolve, reject) => {
    const headers = { authorization, ...(lastEventId && { 'last-event-id': lastEventId }) };
    const req = http.get({ host: '127.0.0.1', port, path: '/api/changes', headers, agent }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return resolve({ status: res.statusCode, changes: 0 });
      }
      let text = '';
      let changes = 0;
      let last;
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        text += chunk;
        let end;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const name = /^event: (.*)$/m.exec(block)?.[1];
          if (!name) continue;
          last = { name, id: /^id: (.*)$/m.exec(block)?.[1] };
          if (name !== 'ready' && name !== 'close' && name !== 'erasure') changes++;
          if (name === 'ready') req.destroy();
        }
      });
      const done = () => resolve({ status: 200, changes, last });
      res.on('end', done);
      res.on('close', done);
    });
    req.on('error', (error) => (error.code === 'ECONNRESET' ? resolve({ status: 200, changes: 0 }) : reject(error)));
  });
}

// The resuming user: a cursor of their empty history, then their history.
const amp = await token('amplifier');
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const empty = (await readStream(amp, undefined, agent)).last.id;
for (let from = 0; from < ENTRIES; from += 5000) {
  const data = Array.from({ length: Math.min(5000, ENTRIES - from) }, (_, i) => ({
    item_id: `urn:amp:${from + i}`,
    last_playback_position: 1,
  }));
  const answer = await request(
    'POST',
    '/api/history/v2/batch',
    { authorization: amp, 'content-type': 'application/json' },
    JSON.stringify({ data }),
  );
  if (answer.status >= 300) throw new Error(`seeding: ${answer.status} ${answer.body}`);
}
const readers = await Promise.all(Array.from({ length: READERS }, (_, i) => token(`reader-${i}`)));
for (const [i, authorization] of readers.entries()) {
  for (let j = 0; j < 20; j++) {
    await request(
      'POST',
      '/api/history/v2',
      { authorization, 'content-type': 'application/json' },
      JSON.stringify({ item_id: `urn:r:${i}:${j}` }),
    );
  }
}
const read = (i) => request('GET', '/api/history/v2?limit=20', { authorization: readers[i % READERS] });
await openLoop(read, RATE * 2, RATE); // warm-up

const quiet = await openLoop(read, RATE * SECONDS, RATE);
let resuming = true;
let sent = 0;
let resumes = 0;
const statuses = {};
const loops = Array.from({ length: STREAMS }, async () => {
  while (resuming) {
    const stream = await readStream(amp, empty, agent);
    sent += stream.changes;
    resumes++;
    const key =
      stream.status === 200 ? `200 ${stream.last?.name === 'close' ? 'close' : (stream.last?.name ?? 'none')}` : String(stream.status);
    statuses[key] = (statuses[key] ?? 0) + 1;
    // A refused resume (429) is retried after its Retry-After would say; the others at once, as a loop would.
    if (stream.status === 429) await new Promise((r) => setTimeout(r, 1000));
  }
});
const busy = await openLoop(read, RATE * SECONDS, RATE);
resuming = false;
await Promise.all(loops);
const p99Quiet = percentile(quiet.latencies, 99);
const p99Busy = percentile(busy.latencies, 99);
console.log(`resumes: ${resumes} (${JSON.stringify(statuses)}), changes sent: ${sent}; readers' statuses ${JSON.stringify(busy.statuses)}`);
console.log(
  `[resume-amplifier] entries=${ENTRIES} streams=${STREAMS} seconds=${SECONDS} changes_sent=${sent} resumes=${resumes} others_p99_quiet_ms=${p99Quiet.toFixed(1)} others_p99_resuming_ms=${p99Busy.toFixed(1)} ratio=${(p99Busy / p99Quiet).toFixed(2)} (target <= 2) load=${loadavg()[0].toFixed(1)}`,
);
process.exit(0);
