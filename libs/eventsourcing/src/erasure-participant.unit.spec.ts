import { erasureEvents } from '@udp/contracts';
import { InProcessBus, type ReceivedMessage } from '@udp/bus';
import { MemoryEventStore } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { waitUntil } from '@udp/test-kit';
import { handleCommand } from './command-handler';
import { type Command, type Decider, type DomainEvent, foldByEvolve } from './decider';
import { StreamStateCache } from './state-cache';
import { handleCommandVisibly } from './write-side';
import { erasureParticipant } from './erasure-participant';
import { Projector } from './projector';

type Noted = DomainEvent<'Noted', { note: string }>;
type Note = Command<'Note', { note: string }>;
const notes: Decider<Note, Noted, string[]> = {
  initialState: () => [],
  evolve: (state, e) => [...state, e.data.note],
  decide: (c) => [{ type: 'Noted', data: { note: c.data.note } }],
  fold: foldByEvolve((state: string[], e: Noted) => [...state, e.data.note]),
  upcast: (type, data) => ({ type, data }) as Noted,
};
const note = (text: string): Note => ({ type: 'Note', data: { note: text }, metadata: { now: 0 } });
const streamOf = (userId: string) => `notes-${userId}`;

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
  const cache = new StreamStateCache();
  const write = { store, projector, readYourWritesTimeoutMs: 1000 };
  const participant = await erasureParticipant({
    service: 'notes-svc',
    bus,
    store,
    readModels,
    projectors: [projector],
    caches: [cache],
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
  return { store, docs, cache, write, projector, participant, confirmations, request, stop };
}

describe('erasureParticipant', () => {
  it("deletes the user's streams, documents and remembered states, confirms with counts, and leaves others alone", async () => {
    const t = await setUp();
    for (const text of ['a1', 'a2'])
      await handleCommandVisibly(t.write, streamOf('ann'), notes, note(text), { retries: 0, cache: t.cache });
    await handleCommandVisibly(t.write, streamOf('bob'), notes, note('b1'));

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
    expect(t.cache.get(streamOf('ann'))).toBeUndefined();
    expect((await t.docs.get('bob'))?.notes).toBe(1);

    // The projector no longer counts the old revisions as applied: a new write is waited for from revision 0.
    expect(await t.projector.waitFor(streamOf('ann'), 0, 20)).toBe(false);
    // A new write starts from nothing, and is acknowledged only once its read model shows it.
    const again = await handleCommandVisibly(t.write, streamOf('ann'), notes, note('fresh'), { retries: 0, cache: t.cache });
    expect(again.stateBefore).toEqual([]);
    expect((await t.docs.get('ann'))?.notes).toBe(1);
    await t.stop();
  });

  it('confirms a redelivered request again without erasing what the user wrote since', async () => {
    const t = await setUp();
    await handleCommand(t.store, streamOf('ann'), notes, note('old'));
    await t.request('e-2', 'ann');
    await waitUntil(() => t.confirmations.length === 1);
    await handleCommandVisibly(t.write, streamOf('ann'), notes, note('new'));
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
    await handleCommandVisibly(t.write, streamOf('ann'), notes, note('a'));
    await t.request('', 'ann');
    await t.request('e-5', 'ann');
    await waitUntil(() => t.confirmations.length === 1);
    expect(t.confirmations[0].value.erasureId).toBe('e-5');
    await t.stop();
  });

  it('acts on a request that names participants only when it is one of them', async () => {
    const t = await setUp();
    await handleCommandVisibly(t.write, streamOf('ann'), notes, note('a'));
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
    await handleCommandVisibly(t.write, streamOf('ann'), notes, note('a'));
    await t.request('e-8', 'ann');
    await waitUntil(() => t.confirmations.length === 1);
    expect(seen).toEqual([1]);
    await t.stop();
  });
});
