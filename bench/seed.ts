// Writes large histories straight into history-svc's SQLite event file (not through HTTP), for the bench:
// `node dist/bench/seed.js <file> <users> <entries per user> <long-history user> <events of that user>`.
// Events are those the service writes (owner recorded), so the service folds and projects them as its own.
import { randomUUID } from 'node:crypto';
import { SqliteEventStore, type EventToAppend } from '@udp/eventstore';
import { historyStreamId } from '../apps/history-svc/src/domain/aggregate';

const [file, users, perUser, longUser, longEvents] = process.argv.slice(2);
const T0 = 1_600_000_000_000;

function recorded(userId: string, itemId: string, id: number, date: number): EventToAppend {
  return {
    id: randomUUID(),
    type: 'HistoryItemRecorded',
    data: { itemId, id, date, deleted: false, deviceId: 'seed', lastPlaybackPosition: date % 3600 },
    metadata: { owner: { userId } },
  };
}

async function seed(): Promise<void> {
  const store = new SqliteEventStore(file);
  const started = performance.now();
  // Appends in flight at once go in one commit (group commit), so many users are written together.
  const inFlight: Array<Promise<unknown>> = [];
  for (let u = 0; u < Number(users); u++) {
    const userId = `seed-user-${u}`;
    const events = Array.from({ length: Number(perUser) }, (_, i) => recorded(userId, `urn:seed:${i}`, i + 1, T0 + i * 1000));
    inFlight.push(store.appendToStream(historyStreamId(userId), events, { expectedRevision: 'no_stream' }));
    if (inFlight.length >= 200) await Promise.all(inFlight.splice(0));
  }
  await Promise.all(inFlight);
  // One long history: replays of 10,000 items, so each item's entry is recorded again and again.
  const distinct = 10_000;
  const chunk = 5_000;
  for (let from = 0; from < Number(longEvents); from += chunk) {
    const events = Array.from({ length: Math.min(chunk, Number(longEvents) - from) }, (_, k) => {
      const n = from + k;
      return recorded(longUser, `urn:long:${n % distinct}`, (n % distinct) + 1, T0 + n * 1000);
    });
    await store.appendToStream(historyStreamId(longUser), events, { expectedRevision: from === 0 ? 'no_stream' : from - 1 });
  }
  await store.close();
  process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - started) / 1000 })}\n`);
}

seed().catch((error) => {
  process.stderr.write(`seed failed: ${error.stack ?? error}\n`);
  process.exitCode = 1;
});
