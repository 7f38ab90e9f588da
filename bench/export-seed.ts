/**
 * Seeds one user's data straight into the embedded event stores (no HTTP), for bench/export.mjs:
 *   node export-seed.js <dataDir> <userId> <historyEntries> <playlists> <preferences>
 * Stream names come from the services' own domain modules, so they follow any change of encoding.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { SqliteEventStore } from '@udp/eventstore';
import { historyStreamId } from '../apps/history-svc/src/domain/aggregate';
import { playlistsStream } from '../apps/playlist-svc/src/domain/aggregate';
import { preferenceStream } from '../apps/preference-svc/src/domain/aggregate';

async function main(): Promise<void> {
  const [dataDir, userId, historyArg, playlistsArg, preferencesArg] = process.argv.slice(2);
  const entries = Number(historyArg);
  const now = Date.now();
  // Owned as the command handler records it, so the services fold and project these events as their own.
  const event = (type: string, data: Record<string, unknown>, owner: Record<string, string> = { userId }) => ({
    id: randomUUID(),
    type,
    data,
    metadata: { owner },
  });

  const history = new SqliteEventStore(join(dataDir, 'history-svc', 'events.sqlite'));
  for (let from = 0, revision = -1; from < entries; from += 2000) {
    const batch = [];
    for (let i = from; i < Math.min(entries, from + 2000); i++) {
      batch.push(
        event('HistoryItemRecorded', {
          itemId: `urn:media:${i}`,
          id: i + 1,
          date: now - entries + i,
          deleted: i % 50 === 0,
          deviceId: 'bench',
          lastPlaybackPosition: i % 3600,
        }),
      );
    }
    const result = await history.appendToStream(historyStreamId(userId), batch, {
      expectedRevision: revision === -1 ? 'no_stream' : revision,
    });
    revision = result.nextRevision;
  }
  await history.close();

  const playlists = new SqliteEventStore(join(dataDir, 'playlist-svc', 'events.sqlite'));
  const playlistEvents = [];
  let bookmarkId = 0;
  for (let p = 0; p < Number(playlistsArg); p++) {
    const playlistId = randomUUID();
    const watchLater = p === 0;
    playlistEvents.push(
      event('PlaylistCreated', {
        playlistId,
        businessId: watchLater ? 'watch_later' : `list-${p}`,
        name: watchLater ? 'Watch later' : `List ${p}`,
        playlistType: watchLater ? 'watch_later' : 'standard',
        date: now,
      }),
    );
    for (let b = 0; b < 20; b++)
      playlistEvents.push(
        event('BookmarkAdded', { playlistId, bookmarkId: ++bookmarkId, itemId: `urn:media:${p}-${b}`, date: now - b, addedAt: now }),
      );
  }
  await playlists.appendToStream(playlistsStream(userId).id, playlistEvents, { expectedRevision: 'no_stream' });
  await playlists.close();

  const preferences = new SqliteEventStore(join(dataDir, 'preference-svc', 'events.sqlite'));
  for (let k = 0; k < Number(preferencesArg); k++) {
    const key = `settings/${k}`;
    const document = {
      theme: k % 2 ? 'dark' : 'light',
      favorites: Array.from({ length: 50 }, (_, i) => `urn:show:${k}-${i}`),
      nested: { level: { value: k } },
    };
    await preferences.appendToStream(
      preferenceStream(userId, key).id,
      [event('PreferenceWritten', { key, document, operation: { kind: 'replace' } }, { userId, key })],
      { expectedRevision: 'no_stream' },
    );
  }
  await preferences.close();
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
