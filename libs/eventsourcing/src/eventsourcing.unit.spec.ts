import { randomUUID } from 'node:crypto';
import { waitUntil } from '@udp/test-kit';
import { MemoryEventStore, MemorySnapshotStore, StoreUnavailableError, type EventStore, type SnapshotStore } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { InProcessBus, type ReceivedMessage } from '@udp/bus';
import { integrationPublisher } from './integration-publisher';
import { handleCommand } from './command-handler';
import { ConcurrencyConflictError } from './concurrency-conflict';
import { type Command, type Decider, type DomainEvent, foldByEvolve, invalid } from './decider';
import { type Snapshotting, snapshotCached } from './snapshots';
import { StreamStateCache } from './state-cache';
import { availabilityGate, handleCommandVisibly } from './write-side';
import { Projector } from './projector';

type Added = DomainEvent<'Added', { n: number }>;
type Add = Command<'Add', { n: number }>;
const evolveCounter = (total: number, e: Added) => total + e.data.n;
const counter: Decider<Add, Added, number> = {
  initialState: () => 0,
  evolve: evolveCounter,
  fold: foldByEvolve(evolveCounter),
  upcast: (_type, data) => ({ type: 'Added', data: { n: Number(data.n) } }),
  decide: (c, total) => {
    if (c.data.n <= 0) throw invalid('n must be positive', 'n');
    return total + c.data.n > 100 ? [] : [{ type: 'Added', data: { n: c.data.n } }];
  },
};
const add = (n: number): Add => ({ type: 'Add', data: { n }, metadata: { now: 0 } });

describe('handleCommand', () => {
  it('folds the stream, decides, appends with the revision it read', async () => {
    const store = new MemoryEventStore();
    await handleCommand(store, 'c-1', counter, add(5));
    const result = await handleCommand(store, 'c-1', counter, add(7));
    expect(result).toEqual({ events: [{ type: 'Added', data: { n: 7 } }], stateBefore: 5, revision: 1, position: 2n });
  });

  it('appends nothing when the decider decides nothing', async () => {
    const store = new MemoryEventStore();
    await handleCommand(store, 'c-1', counter, add(100));
    expect((await handleCommand(store, 'c-1', counter, add(1))).events).toEqual([]);
    expect((await store.readStream('c-1')).events).toHaveLength(1);
  });

  it('lets domain errors through and writes nothing', async () => {
    const store = new MemoryEventStore();
    await expect(handleCommand(store, 'c-1', counter, add(0))).rejects.toThrow('n must be positive');
    expect((await store.readStream('c-1')).revision).toBe(-1);
  });

  it('refuses at once on a conflict without retries, and re-decides with retries', async () => {
    const racing = (store: EventStore, times: number): EventStore => {
      let left = times;
      return Object.assign(Object.create(store), {
        appendToStream: async (...args: Parameters<EventStore['appendToStream']>) => {
          if (left-- > 0)
            await store.appendToStream(args[0], [{ id: randomUUID(), type: 'Added', data: { n: 1 } }], { expectedRevision: 'any' });
          return store.appendToStream(...args);
        },
      });
    };
    const store = new MemoryEventStore();
    await expect(handleCommand(racing(store, 1), 'c-1', counter, add(5))).rejects.toBeInstanceOf(ConcurrencyConflictError);
    const retried = await handleCommand(racing(store, 2), 'c-1', counter, add(5), { retries: 3 });
    expect(retried.stateBefore).toBe(3);
    expect((await store.readStream('c-1')).events.map((e) => e.data.n)).toEqual([1, 1, 1, 5]);
    await expect(handleCommand(racing(store, 5), 'c-1', counter, add(5), { retries: 2 })).rejects.toBeInstanceOf(ConcurrencyConflictError);
  });
});

const reads = (store: MemoryEventStore) => {
  const seen: Array<number | undefined> = [];
  const readStream = store.readStream.bind(store);
  store.readStream = async (id, options) => {
    const read = await readStream(id, options);
    seen.push(read.events.length);
    return read;
  };
  return seen;
};

describe('handleCommand with a state cache', () => {
  it('reads only the events after the remembered state, and decides on the same state as a full read', async () => {
    const store = new MemoryEventStore();
    const cache = new StreamStateCache();
    for (const n of [1, 2, 3, 4]) await handleCommand(store, 'c-1', counter, add(n), { retries: 0, cache });
    const seen = reads(store);
    const cachedResult = await handleCommand(store, 'c-1', counter, add(5), { retries: 0, cache });
    expect(seen).toEqual([1]); // just the remembered last event
    expect(cachedResult.stateBefore).toBe(10);
    expect((await handleCommand(store, 'c-1', counter, add(1))).stateBefore).toBe(15);
  });

  it('sees events appended by another writer since', async () => {
    const store = new MemoryEventStore();
    const cache = new StreamStateCache();
    await handleCommand(store, 'c-1', counter, add(1), { retries: 0, cache });
    await handleCommand(store, 'c-1', counter, add(2)); // another instance, no cache
    expect((await handleCommand(store, 'c-1', counter, add(3), { retries: 0, cache })).stateBefore).toBe(3);
  });

  it('notices a stream erased and written again, even past its old length, and reads it whole', async () => {
    const store = new MemoryEventStore();
    const cache = new StreamStateCache();
    await handleCommand(store, 'c-1', counter, add(50), { retries: 0, cache });
    await store.deleteStream('c-1');
    for (const n of [1, 1, 1]) await handleCommand(store, 'c-1', counter, add(n));
    expect((await handleCommand(store, 'c-1', counter, add(1), { retries: 0, cache })).stateBefore).toBe(3);
  });

  it('forgets the least recently used streams beyond its size', async () => {
    const cache = new StreamStateCache<number>(2);
    cache.set('a', { revision: 0, lastEventId: 'x', state: 1 });
    cache.set('b', { revision: 0, lastEventId: 'y', state: 2 });
    cache.get('a');
    cache.set('c', { revision: 0, lastEventId: 'z', state: 3 });
    expect([cache.get('a')?.state, cache.get('b'), cache.get('c')?.state]).toEqual([1, undefined, 3]);
  });
});

describe('Projector', () => {
  it('applies events in order, keeps a checkpoint, and reports when a write is visible', async () => {
    const store = new MemoryEventStore();
    const readModels = new MemoryReadModelStore();
    const seen: string[] = [];
    const projector = new Projector(store, readModels.checkpoints(), {
      name: 'p',
      streamPrefixes: ['c-'],
      apply: async (e) => void seen.push(`${e.streamId}@${e.revision}`),
    });
    await handleCommand(store, 'c-1', counter, add(1));
    await projector.start();
    expect(seen).toEqual(['c-1@0']);
    const write = { store, projector, readYourWritesTimeoutMs: 1000 };
    await handleCommandVisibly(write, 'c-1', counter, add(2));
    expect(seen).toEqual(['c-1@0', 'c-1@1']);
    expect(await projector.waitFor('c-1', 5, 20)).toBe(false);
    await projector.stop();

    // A restarted projector resumes after its checkpoint: nothing is applied twice.
    const again: string[] = [];
    const resumed = new Projector(store, readModels.checkpoints(), {
      name: 'p',
      streamPrefixes: ['c-'],
      apply: async (e) => void again.push(e.streamId),
    });
    await handleCommand(store, 'c-2', counter, add(1));
    await resumed.start();
    expect(again).toEqual(['c-2']);
    await resumed.stop();
  });

  it('retries a failing event until it succeeds, unhealthy meanwhile, without skipping or reordering', async () => {
    const store = new MemoryEventStore();
    const seen: number[] = [];
    const health: boolean[] = [];
    let failures = 3;
    const projector: Projector = new Projector(
      store,
      new MemoryReadModelStore().checkpoints(),
      {
        name: 'flaky',
        streamPrefixes: ['c-'],
        apply: async (e) => {
          if (e.revision === 1 && failures-- > 0) throw new Error('bus unavailable');
          seen.push(e.revision);
        },
      },
      { retryDelayMs: 1, onError: () => health.push(projector.healthy()) },
    );
    for (const n of [1, 2, 3]) await handleCommand(store, 'c-1', counter, add(n));
    await projector.start();
    expect(seen).toEqual([0, 1, 2]);
    expect(health).toEqual([false, false, false]);
    expect(projector.healthy()).toBe(true);
    await projector.stop();
  });
});

describe('integrationPublisher', () => {
  it('publishes one message per event, keyed by user, in order, with the event id', async () => {
    const store = new MemoryEventStore();
    const bus = new InProcessBus(1);
    const received: ReceivedMessage[] = [];
    await bus.subscribe('counter.v1', 'test', async (m) => void received.push(m));
    const publisher = new Projector(
      store,
      new MemoryReadModelStore().checkpoints(),
      integrationPublisher(bus, {
        name: 'counter-publisher',
        topic: 'counter.v1',
        streamPrefix: 'c-',
        userIdOf: (streamId) => streamId.slice(2),
        details: (event) => ({ amount: (event.data as { n: number }).n }),
      }),
    );
    await publisher.start();
    for (const n of [1, 2]) await handleCommand(store, 'c-ann', counter, add(n));
    await handleCommand(store, 'other-ann', counter, add(1));
    await waitUntil(() => received.length === 2);
    const change = (revision: number, amount: number) => [
      'ann',
      { userId: 'ann', type: 'Added', amount, revision, occurredAt: expect.any(Number) },
    ];
    expect(received.map((m) => [m.key, m.value])).toEqual([change(0, 1), change(1, 2)]);
    expect(received[0].headers?.['event-id']).toMatch(/^[0-9a-f-]{36}$/);
    await publisher.stop();
    await bus.close();
  });
});

describe('availabilityGate', () => {
  it('refuses while the store does not answer, pinging at most once per interval however many writes wait', async () => {
    let up = false;
    let pings = 0;
    const gate = availabilityGate(
      'read models',
      {
        ping: async () => {
          pings++;
          return up;
        },
      },
      50,
    );
    const refused = await Promise.allSettled(Array.from({ length: 10 }, () => gate()));
    expect(
      refused.every((r) => r.status === 'rejected' && r.reason instanceof StoreUnavailableError && r.reason.part === 'read models'),
    ).toBe(true);
    expect(pings).toBe(1);
    up = true;
    await expect(gate()).rejects.toBeInstanceOf(StoreUnavailableError); // the answer is reused until it is 50 ms old
    await waitUntil(
      async () =>
        await gate().then(
          () => true,
          () => false,
        ),
      1000,
      'gate open again',
    );
    expect(pings).toBe(2);
  });

  it('counts a ping slower than its bound as down', async () => {
    const gate = availabilityGate('read models', { ping: () => new Promise<boolean>(() => undefined) }, 1000, 20);
    await expect(gate()).rejects.toThrow(/read models unavailable/);
  });
});

describe('handleCommand with snapshots', () => {
  const codec = {
    version: 1,
    encode: (total: number) => ({ total }),
    decode: (encoded: unknown) => Number((encoded as { total: number }).total),
  };
  const snapshotsEvery = (every: number, store: SnapshotStore = new MemorySnapshotStore()): Snapshotting<number> => ({
    store,
    codec,
    every,
  });

  it('saves one every N events; a writer without the state in memory reads only what is newer', async () => {
    const store = new MemoryEventStore();
    const snapshots = snapshotsEvery(4);
    for (let i = 0; i < 10; i++) await handleCommand(store, 'c-1', counter, add(1), { retries: 0, snapshots });
    expect(await snapshots.store.read('c-1')).toMatchObject({ version: 1, revision: 7, state: '{"total":8}' });
    const seen = reads(store);
    const result = await handleCommand(store, 'c-1', counter, add(1), { retries: 0, cache: new StreamStateCache(), snapshots });
    expect(seen).toEqual([3]); // the snapshot's own last event, then revisions 8 and 9
    expect(result.stateBefore).toBe(10);
  });

  it('saves one at once when a write had to fold N events or more (a long stream without a snapshot)', async () => {
    const store = new MemoryEventStore();
    for (let i = 0; i < 6; i++) await handleCommand(store, 'c-1', counter, add(1));
    const snapshots = snapshotsEvery(5);
    await handleCommand(store, 'c-1', counter, add(1), { retries: 0, snapshots });
    expect(await snapshots.store.read('c-1')).toMatchObject({ revision: 6, state: '{"total":7}' });
  });

  it('ignores a snapshot of another version, and one of a stream erased and written again', async () => {
    const store = new MemoryEventStore();
    const snapshots = snapshotsEvery(2);
    for (let i = 0; i < 4; i++) await handleCommand(store, 'c-1', counter, add(10), { retries: 0, snapshots });
    const newer: Snapshotting<number> = { ...snapshots, codec: { ...codec, version: 2 } };
    expect((await handleCommand(store, 'c-1', counter, add(1), { retries: 0, snapshots: newer })).stateBefore).toBe(40);
    await store.deleteStream('c-1');
    for (let i = 0; i < 5; i++) await handleCommand(store, 'c-1', counter, add(1));
    expect(
      (await handleCommand(store, 'c-1', counter, add(1), { retries: 0, snapshots: snapshotsEvery(100, snapshots.store) })).stateBefore,
    ).toBe(5);
  });

  it('ignores (and reports) a snapshot it cannot decode, and folds the whole stream', async () => {
    const store = new MemoryEventStore();
    for (let i = 0; i < 3; i++) await handleCommand(store, 'c-1', counter, add(2));
    const last = (await store.readStream('c-1')).events[2];
    const saved = new MemorySnapshotStore();
    await saved.write('c-1', { version: 1, revision: 2, lastEventId: last.id, state: 'not json' });
    const errors: string[] = [];
    const snapshots: Snapshotting<number> = { store: saved, codec, every: 100, onError: (id) => errors.push(id) };
    expect((await handleCommand(store, 'c-1', counter, add(1), { retries: 0, snapshots })).stateBefore).toBe(6);
    expect(errors).toEqual(['c-1']);
  });

  it("at a clean stop, saves the remembered states newer than their snapshots; delete removes a stream's", async () => {
    const store = new MemoryEventStore();
    const snapshots = snapshotsEvery(1000);
    const cache = new StreamStateCache<number>();
    for (const id of ['a', 'b']) await handleCommand(store, id, counter, add(3), { retries: 0, cache, snapshots });
    expect(await snapshots.store.read('a')).toBeUndefined();
    expect(await snapshotCached(snapshots, cache)).toBe(2);
    expect(await snapshotCached(snapshots, cache)).toBe(0);
    expect((await snapshots.store.read('b'))?.state).toBe('{"total":3}');
    await snapshots.store.delete('b');
    expect(await snapshots.store.read('b')).toBeUndefined();
  });
});
