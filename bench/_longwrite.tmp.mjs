import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
const root = '/work/main';
const dataDir = mkdtempSync(join(tmpdir(), 'lw-'));
execFileSync(process.execPath, [join(root, 'dist/bench/seed.js'), join(dataDir, 'history-svc/events.sqlite'), '10', '10', 'bench-long', '100000']);
async function start(extra = []) {
  const child = spawn(process.execPath, [...extra, join(root, 'dist/embedded/main.js')], { env: { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await new Promise((r) => { let o = ''; child.stderr.on('data', (c) => { o += c; const m = /gateway on http:\/\/localhost:(\d+)/.exec(o); if (m) r(m[1]); }); });
  return { child, port };
}
const stop = (c) => new Promise((r) => { c.once('exit', r); c.kill('SIGTERM'); });
let s = await start();
const key = new TextEncoder().encode(readFileSync(join(dataDir, 'secrets', 'jwt-signing.key'), 'utf8').trim());
const tok = (u) => new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(u).setIssuer('udp-embedded').setExpirationTime('1h').sign(key);
const long = await tok('bench-long'); const other = await tok('other');
const post = async (t, item) => { const st = performance.now(); const r = await fetch(`http://127.0.0.1:${s.port}/api/history/v2`, { method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' }, body: JSON.stringify({ item_id: item }) }); await r.text(); if (r.status !== 200) throw new Error(r.status); return performance.now() - st; };
console.log('first', (await post(long, 'urn:long:new-0')).toFixed(1));
await stop(s.child);
s = await start(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.PROF] : []);
await post(other, 'urn:warm');
const times = [];
for (let i = 1; i <= 40; i++) times.push((await post(long, `urn:long:new-${i}`)).toFixed(1));
const o = []; for (let i = 1; i <= 20; i++) o.push((await post(other, `urn:o-${i}`)).toFixed(1)); console.log("other", o.join(" "));
console.log('cold', times[0], 'next', times.slice(1, 10).join(' '), 'last', times.slice(-5).join(' '));
await stop(s.child);
