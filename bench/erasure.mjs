#!/usr/bin/env node
// node bench/erasure.mjs: how long the erasure of a heavy user takes in the embedded wiring (SQLite event stores,
// memory read models, the in-process bus), from the request on `userdata.erasure.requested` to the last
// confirmation. Not a test: it asserts nothing and never runs in CI. The data is written straight into the
// stores (as events), not through HTTP: 100,000 history entries, 50 playlists (10 bookmarks each), 20
// preference documents and a profile, plus a bystander whose data must stay. Everything under a temporary
// DATA_DIR, removed at the end. Options: --history=100000 --playlists=50 --preferences=20.
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const options = { history: arg('history', 100_000), playlists: arg('playlists', 50), preferences: arg('preferences', 20) };

// The scenario is TypeScript against the services' own factories; esbuild bundles it (path aliases resolved).
const scenario = `
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { InternalIdentity } from '@udp/auth';
import { InProcessBus } from '@udp/bus';
import { erasureEvents } from '@udp/contracts';
import { SqliteEventStore } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { createLogger } from '@udp/telemetry';
import { createHistoryService } from './apps/history-svc/src/app';
import { historyStream } from './apps/history-svc/src/domain/aggregate';
import { createPlaylistService } from './apps/playlist-svc/src/app';
import { playlistsStream } from './apps/playlist-svc/src/domain/aggregate';
import { createPreferenceService } from './apps/preference-svc/src/app';
import { preferenceStream } from './apps/preference-svc/src/domain/aggregate';
import { createProfileService } from './apps/profile-svc/src/app';
import { profileStream } from './apps/profile-svc/src/domain/aggregate';

export async function run(dataDir: string, o: { history: number; playlists: number; preferences: number }) {
  const T0 = 1_700_000_000_000;
  const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
  const stores = Object.fromEntries(['history-svc', 'playlist-svc', 'preference-svc', 'profile-svc'].map((s) => [s, new SqliteEventStore(join(dataDir, s, 'events.sqlite'))]));
  // Owned as the command handler records it, so the services fold and project these events as their own.
  const append = (svc: string, stream: { id: string; owner: Record<string, string> }, events: Array<{ type: string; data: Record<string, unknown> }>) =>
    stores[svc].appendToStream(stream.id, events.map((e) => ({ id: randomUUID(), ...e, metadata: { owner: stream.owner } })), { expectedRevision: 'any' });

  const seedStart = process.hrtime.bigint();
  for (const [user, entries] of [['heavy-user', o.history], ['bystander', 1000]] as const) {
    for (let from = 0; from < entries; from += 5000) {
      const batch = Array.from({ length: Math.min(5000, entries - from) }, (_, i) => ({
        type: 'HistoryItemRecorded',
        data: { itemId: 'urn:media:' + (from + i), id: from + i + 1, date: T0 + from + i, deleted: false, deviceId: 'bench', lastPlaybackPosition: (from + i) % 3600 },
      }));
      await append('history-svc', historyStream(user), batch);
    }
    const playlists = [];
    for (let p = 0; p < o.playlists; p++) {
      const playlistId = randomUUID();
      playlists.push({ type: 'PlaylistCreated', data: { playlistId, businessId: 'list-' + p, name: 'List ' + p, playlistType: 'standard', date: T0 } });
      for (let b = 0; b < 10; b++) playlists.push({ type: 'BookmarkAdded', data: { playlistId, bookmarkId: p * 10 + b + 1, itemId: 'urn:media:' + b, date: T0, addedAt: T0 } });
    }
    await append('playlist-svc', playlistsStream(user), playlists);
    for (let k = 0; k < o.preferences; k++) {
      const key = 'settings-' + k;
      await append('preference-svc', preferenceStream(user, key), [{ type: 'PreferenceWritten', data: { key, document: { theme: 'dark', volume: k, favourites: Array.from({ length: 20 }, (_, i) => 'urn:media:' + i) }, operation: { kind: 'replace' } } }]);
    }
    const profile = { publicUserId: randomUUID(), displayName: 'Bench', firstName: null, lastName: null, language: 'en', avatarUrl: null, public: true, publicFields: ['displayName'], createdAt: T0, updatedAt: T0 };
    await append('profile-svc', profileStream(user), [{ type: 'ProfileCreated', data: { profile } }]);
  }
  const seedMs = ms(seedStart);

  // The embedded wiring: one in-process bus, memory read models rebuilt from the stores at start.
  const bus = new InProcessBus();
  const logger = createLogger('bench', 'silent');
  const identity = new InternalIdentity('b'.repeat(32));
  const startStart = process.hrtime.bigint();
  const base = (svc: string) => ({ store: stores[svc], readModels: new MemoryReadModelStore(), bus, identity, logger });
  const services = [
    await createHistoryService(base('history-svc')),
    await createPlaylistService(base('playlist-svc')),
    await createPreferenceService(base('preference-svc')),
    await createProfileService(base('profile-svc')),
  ];
  const startMs = ms(startStart);
  const sizeBefore = statSync(join(dataDir, 'history-svc', 'events.sqlite')).size;

  const confirmations: erasureEvents.ErasureConfirmedMessage[] = [];
  let done: () => void = () => undefined;
  const allConfirmed = new Promise<void>((resolve) => (done = resolve));
  await bus.subscribe(erasureEvents.ERASURE_TOPICS.confirmed, 'bench', async (m) => {
    confirmations.push(m.value as erasureEvents.ErasureConfirmedMessage);
    if (confirmations.length === services.length) done();
  });
  const erasureStart = process.hrtime.bigint();
  await bus.publish(erasureEvents.ERASURE_TOPICS.requested, [{ key: 'heavy-user', value: { erasureId: randomUUID(), userId: 'heavy-user', requestedAt: Date.now() } }]);
  await allConfirmed;
  const erasureMs = ms(erasureStart);

  const left = (await stores['history-svc'].readStream(historyStream('heavy-user').id)).events.length;
  const bystander = (await stores['history-svc'].readStream(historyStream('bystander').id)).events.length;
  for (const s of services) await s.stop();
  await bus.close();
  for (const s of Object.values(stores)) await s.close();
  return {
    seedMs, startMs, erasureMs, left, bystander, sizeBefore,
    confirmations: confirmations.map((c) => ({ service: c.service, streamsDeleted: c.streamsDeleted, documentsDeleted: c.documentsDeleted })),
  };
}
`;

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'udp-bench-erasure-'));
  try {
    // Inside the repo, so that the bundle's external packages resolve from its node_modules.
    const outfile = join(root, 'dist', 'bench', 'erasure-scenario.cjs');
    await build({
      stdin: { contents: scenario, resolveDir: root, sourcefile: 'erasure-bench.ts', loader: 'ts' },
      outfile,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      packages: 'external',
      logLevel: 'warning',
    });
    const { run } = createRequire(import.meta.url)(outfile);
    process.stderr.write(
      `bench: seeding ${options.history} history entries, ${options.playlists} playlists, ${options.preferences} preferences, then erasing\n`,
    );
    const r = await run(dataDir, options);
    const fmt = (n) => n.toFixed(0);
    console.log(
      `seeded in ${fmt(r.seedMs)} ms; services started (read models rebuilt) in ${fmt(r.startMs)} ms; history store ${(r.sizeBefore / 1e6).toFixed(1)} MB`,
    );
    for (const c of r.confirmations) console.log(`  ${c.service}: ${c.streamsDeleted} stream(s), ${c.documentsDeleted} document(s)`);
    console.log(`erasure of the user, request to the last confirmation: ${fmt(r.erasureMs)} ms (target < 2000 ms)`);
    console.log(`afterwards: ${r.left} events of the user left; the bystander's history still has ${r.bystander} events`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
