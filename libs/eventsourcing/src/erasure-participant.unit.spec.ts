import { erasureEvents } from '@udp/contracts';
import { InProcessBus, type ReceivedMessage } from '@udp/bus';
import { MemoryEventStore } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { waitUntil } from '@udp/test-kit';
import type { Aggregate } from './aggregate';
import { commandHandler } from './command-handler';
import { type Command, type Decider, type DomainEvent, type Unstamped, foldByEvolve } from './decider';
import { StateCache } from './state-cache';
import { erasureParticipant } from './erasure-participant';
import { Projector } from './projector';

type Noted = DomainEvent<'Noted', { note: string }>;
type Note = Command<'Note', { note: string }>;
const notes: Decider<Note, Noted, string[]> = {
  initialState: () => [],
  evolve: (state, e) => [...state, e.data.note],
  decide: (c) => [{ type: 'Noted', data: { note: c.data.note } }],
  fold: foldByEvolve((state: string[], e: Noted) => [...state, e.data.note]),
};
const note = (text: string): Unstamped<Note> => ({ type: 'Note', data: { note: text } });
const streamOf = (userId: string) => `notes-${userId}`;
const notesOfUsers: Aggregate<Note, Noted, string[], string> = {
  category: 'notes-',
  streamOf: (userId) => ({ id: streamOf(userId) }),
  idOf: (streamId) => streamId.slice('notes-'.length),
  decider: notes,
  events: {
    parse: (stored) => {
      const { data } = stored as { data: { note: string } };
      return { type: 'Noted', data: { note: data.note } };
    },
  },
  conflictRetries: 0,
};

async function setUp(beforeStreamsDeleted?: (userId: string) => Promise<void>) {
  const store = new MemoryEventStore();
  const readModels = new MemoryReadModelStore();
  const bus = new InProcessBus(1);
  const docs = readModels.collection<{ _id: string; userId: string; notes: number; revision: number }>('notes');
  const projector = new Projector(store, readModels.checkpoints(), {
    name: 'notes',
    streamPrefixes: ['notes-'],
    apply: async (e) => {
      const userId = e.streamId.slice('notes-'.length);
      await docs.upsertIfNewer({ _id: userId, userId, notes: e.revision + 1, revision: e.revision });
    },
  });
  await projector.start();
  const cache = new StateCache<string[]>({ maxStreams: 10 });
  const write = { store, projector, readYourWritesTimeoutMs: 1000 };
  /** Writes as the service does (remembering states), or (`unseen`) as a write the service does not wait for. */
  const writeNote = (userId: string, text: string, unseen = false) =>
    commandHandler(notesOfUsers, {
      write: unseen ? { store, readYourWritesTimeoutMs: 1000 } : write,
      now: () => 0,
      states: unseen ? undefined : cache,
    })(userId, note(text));
  const participant = await erasureParticipant({
    service: 'notes-svc',
    bus,
    store,
    readModels,
    projectors: [projector],
    states: [cache],
    streamsOfUser: (userId) => [streamOf(userId)],
    documentsOfUser: (userId) => [{ collection: 'notes', filter: { userId } }],
    beforeStreamsDeleted,
    now: () => 42,
  });
  const confirmations: ReceivedMessage[] = [];
  await bus.subscribe(erasureEvents.ERASURE_TOPICS.confirmed, 'test', async (m) => void confirmations.push(m));
  const request = (erasureId: string, userId: string, participants?: string[]) =>
    bus.publish(erasureEvents.ERASURE_TOPICS.requested, [
      { key: userId, value: { erasureId, userId, requestedAt: 1, ...(participants && { participants }) } },
    ]);
  const stop = async () => {
    await participant.stop();
    await projector.stop();
    await bus.close();
  };
  return { store, docs, cache, writeNote, projector, participant, confirmations, request, stop };
}

describe('erasureParticipant', () => {
  it("deletes the user's streams, documents and remembered states, confirms with counts, and leaves others alone", async () => {
    const t = await setUp();
    for (const text of ['a1', 'a2']) await t.writeNote('ann', text);
    await t.writeNote('bob', 'b1');

    await t.request('e-1', 'ann');
    await waitUntil(() => t.confirmations.length === 1);
    expect(t.confirmations[0].key).toBe('ann');
    expect(t.confirmations[0].value).toEqual({
      erasureId: 'e-1',
      userId: 'ann',
      service: 'notes-svc',
      streamsDeleted: 1,
      documentsDeleted: 1,
      confirmedAt: 42,
    });
    expect(await t.store.readStream(streamOf('ann'))).toEqual({ revision: -1, events: [] });
    expect(await t.docs.get('ann')).toBeNull();
    expect(await t.cache.load(streamOf('ann'))).toBeUndefined();
    expect((await t.docs.get('bob'))?.notes).toBe(1);

    // The projector no longer counts the old revisions as applied: a new write is waited for from revision 0.
    expect(await t.projector.waitFor(streamOf('ann'), 0, 20)).toBe(false);
    // A new write starts from nothing, and is acknowledged only once its read model shows it.
    const again = await t.writeNote('ann', 'fresh');
    expect(again.newState).toEqual(['fresh']);
    expect((await t.docs.get('ann'))?.notes).toBe(1);
    await t.stop();
  });

  it('confirms a redelivered request again without erasing what the user wrote since', async () => {
    const t = await setUp();
    await t.writeNote('ann', 'old', true);
    await t.request('e-2', 'ann');
    await waitUntil(() => t.confirmations.length === 1);
    await t.writeNote('ann', 'new');
    await t.request('e-2', 'ann');
    await waitUntil(() => t.confirmations.length === 2);
    expect(t.confirmations.map((m) => [m.value.erasureId, m.value.streamsDeleted])).toEqual([
      ['e-2', 1],
      ['e-2', 1],
    ]);
    expect((await t.store.readStream(streamOf('ann'))).events.map((e) => e.data.note)).toEqual(['new']);
    // A new request erases again; nothing left to erase is no error.
    await t.request('e-3', 'ann');
    await t.request('e-4', 'ann');
    await waitUntil(() => t.confirmations.length === 4);
    expect(t.confirmations.slice(2).map((m) => [m.value.erasureId, m.value.streamsDeleted, m.value.documentsDeleted])).toEqual([
      ['e-3', 1, 1],
      ['e-4', 0, 0],
    ]);
    await t.stop();
  });

  it('skips a malformed request and goes on with the next', async () => {
    const t = await setUp();
    await t.writeNote('ann', 'a');
    await t.request('', 'ann');
    await t.request('e-5', 'ann');
    await waitUntil(() => t.confirmations.length === 1);
    expect(t.confirmations[0].value.erasureId).toBe('e-5');
    await t.stop();
  });

  it('acts on a request that names participants only when it is one of them', async () => {
    const t = await setUp();
    await t.writeNote('ann', 'a');
    await t.request('e-6', 'ann', ['other-svc']);
    await t.request('e-7', 'ann', ['other-svc', 'notes-svc']);
    await waitUntil(() => t.confirmations.length === 1);
    expect(t.confirmations.map((m) => [m.value.erasureId, m.value.streamsDeleted])).toEqual([['e-7', 1]]);
    await t.stop();
  });

  it("runs the service's own work before the streams go, and confirms only after it", async () => {
    const seen: number[] = [];
    const the: { store?: MemoryEventStore } = {};
    const t = await setUp(async (userId) => void seen.push((await the.store!.readStream(streamOf(userId))).events.length));
    the.store = t.store;
    await t.writeNote('ann', 'a');
    await t.request('e-8', 'ann');
    await waitUntil(() => t.confirmations.length === 1);
    expect(seen).toEqual([1]);
    await t.stop();
  });
});
