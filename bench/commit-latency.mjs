#!/usr/bin/env node
// node bench/commit-latency.mjs [commits]: the floor under every acknowledged write on this disk. One SQLite file in
// the event store's settings (WAL, synchronous=FULL: a commit is on disk before the write is answered), one small
// insert per commit, as a history write makes; prints the commit latency percentiles. A cold-write target below
// this floor cannot be met by code on this machine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const commits = Number(process.argv[2] ?? 500);
const dir = mkdtempSync(join(tmpdir(), 'commit-latency-'));
const db = new Database(join(dir, 'events.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('CREATE TABLE events (position INTEGER PRIMARY KEY, stream TEXT NOT NULL, data TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO events (stream, data) VALUES (?, ?)');
const data = JSON.stringify({ itemId: 'urn:media:1', id: 1, date: Date.now(), deleted: false, lastPlaybackPosition: 61.5 });
const ms = [];
for (let i = 0; i < commits; i++) {
  const started = performance.now();
  insert.run(`history-${i % 100}`, data);
  ms.push(performance.now() - started);
}
db.close();
rmSync(dir, { recursive: true, force: true });
ms.sort((a, b) => a - b);
const at = (p) => ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))].toFixed(2);
console.log(JSON.stringify({ commits, p50: at(50), p90: at(90), p99: at(99), max: ms[ms.length - 1].toFixed(2) }));
