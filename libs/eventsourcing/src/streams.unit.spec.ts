import { MemoryEventStore } from '@udp/eventstore';
import { handleCommand } from './command-handler';
import type { Command, Decider, DomainEvent } from './decider';
import {
  ForeignEventError,
  STREAM_CATEGORIES,
  historyStreamId,
  ownedStream,
  ownerOfPreferenceStream,
  preferenceStreamId,
  preferenceStreamPrefixOf,
  userIdOfStream,
  userScopedId,
} from './streams';

const awkward = ['u', 'u-YWI', 'a/b', 'a%2Fb', 'a%', '%', '/', '', 'ab>settings', 'settings', 'YWI-c2V0dGluZ3M', 'x/y/z', 'é/ü'];

describe('stream names', () => {
  it('no category prefix is a prefix of another (a subscription by prefix sees one aggregate only)', () => {
    const prefixes = Object.values(STREAM_CATEGORIES);
    for (const a of prefixes) for (const b of prefixes) if (a !== b) expect(b.startsWith(a)).toBe(false);
  });

  it('give a different preference stream to every (user, key) pair, and read back the pair', () => {
    const names = new Map<string, string>();
    for (const userId of awkward) {
      for (const key of awkward) {
        const name = preferenceStreamId(userId, key);
        expect(names.get(name)).toBeUndefined();
        names.set(name, `${userId}|${key}`);
        expect(ownerOfPreferenceStream(name)).toEqual({ userId, key });
        expect(name.startsWith(preferenceStreamPrefixOf(userId))).toBe(true);
        for (const other of awkward) if (other !== userId) expect(name.startsWith(preferenceStreamPrefixOf(other))).toBe(false);
      }
    }
  });

  it('give a different one-user stream and document id to every user', () => {
    const streams = new Set(awkward.map(historyStreamId));
    expect(streams.size).toBe(awkward.length);
    for (const userId of awkward) expect(userIdOfStream(STREAM_CATEGORIES.history, historyStreamId(userId))).toBe(userId);
    const ids = new Set<string>();
    for (const userId of awkward) for (const rest of awkward) ids.add(userScopedId(userId, rest));
    expect(ids.size).toBe(awkward.length ** 2);
  });

  it('leave user ids as the gateway issues them unchanged, so stored names stay valid', () => {
    expect(historyStreamId('alice-1@x.y:z|w')).toBe('history-alice-1@x.y:z|w');
    expect(userScopedId('alice', 'urn:a/b')).toBe('alice/urn:a/b');
  });
});

type Add = Command<'Add', { n: number }>;
type Added = DomainEvent<'Added', { n: number }>;
const counter: Decider<Add, Added, number> = {
  decide: (c) => [{ type: 'Added', data: { n: c.data.n } }],
  evolve: (s, e) => s + e.data.n,
  fold: (events, from) => events.reduce((s, e) => s + e.data.n, from),
  initialState: () => 0,
  upcast: (_type, data) => ({ type: 'Added', data: { n: Number(data.n) } }),
};
const add = (n: number): Add => ({ type: 'Add', data: { n }, metadata: { now: 0 } });

describe('handleCommand on an owned stream', () => {
  it('records the owner on every event it appends', async () => {
    const store = new MemoryEventStore();
    await handleCommand(store, ownedStream('c-1', { userId: 'alice' }), counter, add(2));
    expect((await store.readStream('c-1')).events[0].metadata).toEqual({ owner: { userId: 'alice' } });
  });

  it('refuses to fold an event of another owner, and accepts events written before owners were recorded', async () => {
    const store = new MemoryEventStore();
    await store.appendToStream('c-1', [{ id: 'e0', type: 'Added', data: { n: 1 } }], { expectedRevision: 'no_stream' });
    const result = await handleCommand(store, ownedStream('c-1', { userId: 'alice' }), counter, add(2));
    expect(result.stateBefore).toBe(1);
    await store.appendToStream('c-1', [{ id: 'e2', type: 'Added', data: { n: 5 }, metadata: { owner: { userId: 'bob' } } }], {
      expectedRevision: 1,
    });
    await expect(handleCommand(store, ownedStream('c-1', { userId: 'alice' }), counter, add(2))).rejects.toBeInstanceOf(ForeignEventError);
    await store.appendToStream('c-2', [{ id: 'e3', type: 'Added', data: { n: 5 }, metadata: { owner: { userId: 'alice', key: 'k' } } }], {
      expectedRevision: 'no_stream',
    });
    await expect(handleCommand(store, ownedStream('c-2', { userId: 'alice' }), counter, add(2))).rejects.toBeInstanceOf(ForeignEventError);
  });
});
