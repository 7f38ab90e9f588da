import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus } from '@udp/bus';
import { commonConfigSchema, loadConfig } from '@udp/config';
import { Projector, erasureParticipant, type Projection } from '@udp/eventsourcing';
import type { RecordedEvent } from '@udp/eventstore';
import { closeAdapters, openAdapters } from './adapters';

/**
 * The embedded read models across restarts: kept in SQLite with their checkpoints, so a start replays only newer
 * events; without the file it replays all of the log; an erasure leaves no byte of the user in its files.
 */
const SERVICE = 'demo-svc';
const COLLECTION = 'notes';

interface Note {
  _id: string;
  userId: string;
  text: string;
  revision: number;
}

/** One service session on DATA_DIR: its adapters, and a projector that counts the events it applies. */
async function session(dir: string) {
  const shared = { bus: new InProcessBus() };
  const adapters = await openAdapters(loadConfig(commonConfigSchema, { DATA_DIR: dir }), SERVICE, shared);
  const applied: RecordedEvent[] = [];
  const projection: Projection = {
    name: 'notes',
    streamPrefixes: ['note-'],
    async apply(event) {
      applied.push(event);
      const userId = event.streamId.slice('note-'.length);
      const text = String(event.data.text);
      await adapters.readModels
        .collection<Note>(COLLECTION)
        .upsertIfNewer({ _id: `${userId}/${text}`, userId, text, revision: event.revision });
    },
  };
  const projector = new Projector(adapters.store, adapters.readModels.checkpoints(), projection);
  const append = async (userId: string, ...texts: string[]) => {
    await adapters.store.appendToStream(
      `note-${userId}`,
      texts.map((text) => ({ id: `${userId}-${text}`, type: 'NoteWritten', data: { text } })),
      { expectedRevision: 'any' },
    );
  };
  const notes = async (userId?: string) =>
    (await adapters.readModels.collection<Note>(COLLECTION).find(userId ? { userId } : {}, { sort: { _id: 1 } })).map((n) => n._id);
  return {
    adapters,
    shared,
    applied,
    projector,
    append,
    notes,
    /** A clean stop: the last writes of the read models are committed with their checkpoint. */
    async stop() {
      await projector.stop();
      await closeAdapters(adapters, shared);
    },
    /**
     * A crash as one process can play it: the event log as written (every append was durable), the read models as
     * committed (their connection closed; a real crash loses the last uncommitted writes, main.crash.int.spec.ts).
     */
    async crash() {
      await projector.stop();
      await adapters.store.close();
      await adapters.snapshots.close();
      await adapters.readModels.close();
    },
  };
}

const readModelsFile = (dir: string) => join(dir, SERVICE, 'read-models.sqlite');
/** Every file of the read models (the database, its write-ahead log and shared memory), as one text. */
const readModelsBytes = (dir: string) =>
  readdirSync(join(dir, SERVICE))
    .filter((name) => name.startsWith('read-models.'))
    .map((name) => readFileSync(join(dir, SERVICE, name), 'latin1'))
    .join('');

describe('embedded read models saved with their checkpoint', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'udp-read-models-'));
  });

  it('given a clean stop, when the service starts again, then it replays only the newer events', async () => {
    const first = await session(dir);
    await first.append('alice', 'a', 'b', 'c');
    await first.projector.start();
    expect(first.applied).toHaveLength(3);
    await first.stop();
    expect(existsSync(readModelsFile(dir))).toBe(true);

    const second = await session(dir);
    await second.append('alice', 'd');
    await second.append('bob', 'e');
    await second.projector.start();
    expect(second.applied.map((e) => e.data.text)).toEqual(['d', 'e']);
    expect(await second.notes()).toEqual(['alice/a', 'alice/b', 'alice/c', 'alice/d', 'bob/e']);
    await second.stop();
  });

  it('given a crash, when the service starts again, then it replays what was not committed and misses nothing', async () => {
    const first = await session(dir);
    await first.append('alice', 'a', 'b');
    await first.projector.start();
    await first.stop();

    const second = await session(dir);
    await second.projector.start();
    await second.append('alice', 'c', 'd');
    await second.projector.caughtUp();
    expect(second.applied).toHaveLength(2);
    await second.crash();

    const third = await session(dir);
    await third.projector.start();
    // A real crash loses at most the uncommitted writes, and their checkpoint with them: those are replayed.
    expect(['c', 'd'].slice(2 - third.applied.length)).toEqual(third.applied.map((e) => e.data.text));
    expect(await third.notes()).toEqual(['alice/a', 'alice/b', 'alice/c', 'alice/d']);
    await third.stop();
  });

  it('given no read-model file (removed, or never made), then the read models are rebuilt from the whole log', async () => {
    const first = await session(dir);
    await first.append('alice', 'a', 'b');
    await first.projector.start();
    await first.stop();
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${readModelsFile(dir)}${suffix}`, { force: true });

    const second = await session(dir);
    await second.projector.start();
    expect(second.applied).toHaveLength(2);
    expect(await second.notes()).toEqual(['alice/a', 'alice/b']);
    await second.stop();
  });

  it('given the saved copy of a former version (read-models.ndjson), then it is removed at start', async () => {
    const legacy = join(dir, SERVICE, 'read-models.ndjson');
    const first = await session(dir);
    await first.stop();
    writeFileSync(legacy, '{"format":"udp-memory-read-models","version":1}\n');
    const second = await session(dir);
    expect(existsSync(legacy)).toBe(false);
    await second.stop();
  });

  it('given a copy from another event log (its checkpoint beyond the log), then it is ignored and the log rebuilt', async () => {
    const first = await session(dir);
    await first.append('alice', 'a', 'b', 'c');
    await first.projector.start();
    await first.stop();
    // The events file replaced by a shorter one (a restore from an older backup, say).
    for (const file of ['events.sqlite', 'events.sqlite-wal', 'events.sqlite-shm']) rmSync(join(dir, SERVICE, file), { force: true });

    const second = await session(dir);
    await second.append('bob', 'x');
    await second.projector.start();
    expect(await second.notes()).toEqual(['bob/x']);
    await second.stop();
  });

  it('when a user is erased, then no byte of their documents is left in the files, and none comes back after a crash or a clean stop', async () => {
    const first = await session(dir);
    await first.append('alice', 'secret-note');
    await first.append('bob', 'b');
    await first.projector.start();
    await first.stop();
    expect(readModelsBytes(dir)).toContain('secret-note');

    const second = await session(dir);
    await second.projector.start();
    const participant = await erasureParticipant({
      service: SERVICE,
      bus: second.adapters.bus,
      store: second.adapters.store,
      readModels: second.adapters.readModels,
      projectors: [second.projector],
      streamsOfUser: (userId) => [`note-${userId}`],
      documentsOfUser: (userId) => [{ collection: COLLECTION, filter: { userId } }],
    });
    await participant.erase('alice');
    await participant.stop();
    // Gone from the files at once, before the erasure is confirmed.
    expect(readModelsBytes(dir)).not.toContain('secret-note');
    expect(readModelsBytes(dir)).not.toContain('alice');
    await second.crash();

    const third = await session(dir);
    await third.projector.start();
    expect(await third.notes()).toEqual(['bob/b']);
    await third.stop();
    expect(readModelsBytes(dir)).not.toContain('secret-note');

    const fourth = await session(dir);
    await fourth.projector.start();
    expect(fourth.applied).toHaveLength(0);
    expect(await fourth.notes()).toEqual(['bob/b']);
    await fourth.stop();
  });
});
