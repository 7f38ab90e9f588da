import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from '@udp/test-kit';
import {
  MemoryEventStore,
  MemorySnapshotStore,
  SqliteEventStore,
  StoreUnavailableError,
  type EventStore,
  type SnapshotStore,
} from '@udp/eventstore';
import { type CheckpointStore, MemoryReadModelStore } from '@udp/readmodel';
import { InProcessBus, type ReceivedMessage } from '@udp/bus';
import { type Aggregate, ForeignEventError, oneStreamPerUser } from './aggregate';
import { integrationPublisher } from './integration-publisher';
import { commandHandler } from './command-handler';
import { ConcurrencyConflictError } from './concurrency-conflict';

import { type Command, type Decider, type DomainEvent, type Unstamped, foldByEvolve, invalid } from './decider';
import { type SnapshotCodec, StateCache } from './state-cache';
import { availabilityGate } from './command-handler';
import { Projector } from './projector';

type Added = DomainEvent<'Added', { n: number }>;
type Add = Command<'Add', { n: number }>;
const evolveCounter = (total: number, e: Added) => total + e.data.n;
const counter: Decider<Add, Added, number> = {
  initialState: () => 0,
  evolve: evolveCounter,
  fold: foldByEvolve(evolveCounter),
  decide: (c, total) => {
    if (c.data.n <= 0) throw invalid('n must be positive', 'n');
    return total + c.data.n > 100 ? [] : [{ type: 'Added', data: { n: c.data.n } }];
  },
};
const add = (n: number): Unstamped<Add> => ({ type: 'Add', data: { n } });

/** Counters in streams `<category><id>` (no owner), their events parsed on read. */
const counters = (category = 'c-', conflictRetries = 0): Aggregate<Add, Added, number, string> => ({
  category,
  streamOf: (id) => ({ id: category + id }),
  idOf: (streamId) => streamId.slice(category.length),
  decider: counter,
  events: {
    parse(stored) {
      const { type, data } = stored as { type: string; data: { n?: unknown } };
      if (type !== 'Added' || typeof data.n !== 'number') throw new Error(`not an Added event: ${type}`);
      return { type, data: { n: data.n } };
    },
  },
  conflictRetries,
});

/** The command handler of the counters on `store`. */
const handler = (
  store: EventStore,
  options: { retries?: number; states?: StateCache<number>; projector?: Projector; category?: string } = {},
) =>
  commandHandler(counters(options.category, options.retries), {
    write: { store, projector: options.projector, readYourWritesTimeoutMs: 1000 },
    now: () => 0,
    states: options.states,
  });

describe('commandHandler', () => {
  it('folds the stream, decides, appends with the revision it read', async () => {
    const store = new MemoryEventStore();
    const handle = handler(store);
    await handle('1', add(5));
    const result = await handle('1', add(7));
    expect(result).toEqual({ newEvents: [{ type: 'Added', data: { n: 7 } }], newState: 12, nextExpectedRevision: 1, position: 2n });
  });

  it('appends nothing when the decider decides nothing', async () => {
    const store = new MemoryEventStore();
    await handler(store)('1', add(100));
    expect(await handler(store)('1', add(1))).toEqual({ newEvents: [], newState: 100, nextExpectedRevision: 0 });
    expect((await store.readStream('c-1')).events).toHaveLength(1);
  });

  it('lets domain errors through and writes nothing', async () => {
    const store = new MemoryEventStore();
    await expect(handler(store)('1', add(0))).rejects.toThrow('n must be positive');
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
    await expect(handler(racing(store, 1))('1', add(5))).rejects.toBeInstanceOf(ConcurrencyConflictError);
    const retried = await handler(racing(store, 2), { retries: 3 })('1', add(5));
    expect(retried.newState).toBe(8);
    expect((await store.readStream('c-1')).events.map((e) => e.data.n)).toEqual([1, 1, 1, 5]);
    await expect(handler(racing(store, 5), { retries: 2 })('1', add(5))).rejects.toBeInstanceOf(ConcurrencyConflictError);
  });

  it('refuses a stored event its schema does not parse, and writes nothing', async () => {
    const store = new MemoryEventStore();
    await store.appendToStream('c-1', [{ id: randomUUID(), type: 'Added', data: { n: 'five' } }], { expectedRevision: 'any' });
    await expect(handler(store)('1', add(1))).rejects.toThrow('stream c-1 revision 0 does not match its event schema');
    expect((await store.readStream('c-1')).revision).toBe(0);
  });

  it('runs beforeAppend before each append, with what was decided; when it throws, nothing is appended', async () => {
    const store = new MemoryEventStore();
    const seen: unknown[] = [];
    const guarded = commandHandler(counters(), {
      write: { store, readYourWritesTimeoutMs: 1000 },
      now: () => 0,
      async beforeAppend({ id, streamId, revision, state, newEvents, newState }) {
        seen.push({ id, streamId, revision, state, newEvents, newState });
        if (newState > 10) throw invalid('past 10', 'n');
      },
    });
    await guarded('1', add(4));
    await expect(guarded('1', add(7))).rejects.toThrow('past 10');
    expect(seen).toEqual([
      { id: '1', streamId: 'c-1', revision: -1, state: 0, newEvents: [{ type: 'Added', data: { n: 4 } }], newState: 4 },
      { id: '1', streamId: 'c-1', revision: 0, state: 4, newEvents: [{ type: 'Added', data: { n: 7 } }], newState: 11 },
    ]);
    expect((await store.readStream('c-1')).revision).toBe(0);
  });
});

const reads = (store: EventStore) => {
  const seen: Array<number | undefined> = [];
  const readStream = store.readStream.bind(store);
  store.readStream = async (id, options) => {
    const read = await readStream(id, options);
    seen.push(read.events.length);
    return read;
  };
  return seen;
};

describe('commandHandler on streams of one user each', () => {
  const owned = (store: EventStore) =>
    commandHandler({ ...counters(), ...oneStreamPerUser('c-') }, { write: { store, readYourWritesTimeoutMs: 1000 }, now: () => 0 });

  it('records the owner on every event it appends', async () => {
    const store = new MemoryEventStore();
    await owned(store)('alice', add(2));
    expect((await store.readStream('c-alice')).events[0].metadata).toEqual({ owner: { userId: 'alice' } });
  });

  it('refuses to fold an event of another owner, or of no owner', async () => {
    const store = new MemoryEventStore();
    await owned(store)('alice', add(1));
    await store.appendToStream('c-alice', [{ id: 'e1', type: 'Added', data: { n: 5 }, metadata: { owner: { userId: 'bob' } } }], {
      expectedRevision: 0,
    });
    await expect(owned(store)('alice', add(2))).rejects.toBeInstanceOf(ForeignEventError);
    await store.appendToStream(
      'c-carol',
      [{ id: 'e2', type: 'Added', data: { n: 5 }, metadata: { owner: { userId: 'carol', key: 'k' } } }],
      {
        expectedRevision: 'no_stream',
      },
    );
    await expect(owned(store)('carol', add(2))).rejects.toBeInstanceOf(ForeignEventError);
    await store.appendToStream('c-dan', [{ id: 'e3', type: 'Added', data: { n: 5 } }], { expectedRevision: 'no_stream' });
    await expect(owned(store)('dan', add(2))).rejects.toBeInstanceOf(ForeignEventError);
  });
});

describe('commandHandler with a state cache', () => {
  it('reads only the events after the remembered state, and decides on the same state as a full read', async () => {
    const store = new MemoryEventStore();
    const cached = handler(store, { states: new StateCache<number>({ maxStreams: 10 }) });
    for (const n of [1, 2, 3, 4]) await cached('1', add(n));
    const seen = reads(store);
    const cachedResult = await cached('1', add(5));
    expect(seen).toEqual([]); // the state in memory is the stream's: nothing read
    expect(cachedResult.newState).toBe(15);
    expect((await handler(store)('1', add(1))).newState).toBe(16);
  });

  it('sees events appended by another writer since: its decision without a read meets them as a race, retried after a read', async () => {
    const store = new MemoryEventStore();
    const cached = handler(store, { states: new StateCache<number>({ maxStreams: 10 }), retries: 1 });
    await cached('1', add(1));
    await handler(store)('1', add(2)); // another instance, no cache
    expect((await cached('1', add(3))).newState).toBe(6);
    // Without a retry, that is the answer to a race (history's 429), never a decision on the state it did not read
    await handler(store)('1', add(4));
    const once = handler(store, { states: new StateCache<number>({ maxStreams: 10 }) });
    await once('1', add(1));
    await handler(store)('1', add(1));
    await expect(once('1', add(1))).rejects.toBeInstanceOf(ConcurrencyConflictError);
    expect((await store.readStream('c-1')).events.map((e) => e.data.n)).toEqual([1, 2, 3, 4, 1, 1]);
  });

  it('decides without a read while only its own store writes, and reads again once another process wrote to the file', async () => {
    // Given two SQLite stores on one file, as two processes, and a writer with a state cache on the first
    const dir = mkdtempSync(join(tmpdir(), 'udp-epoch-'));
    const here = new SqliteEventStore(join(dir, 'events.sqlite'));
    const there = new SqliteEventStore(join(dir, 'events.sqlite'));
    try {
      const cached = handler(here, { states: new StateCache<number>({ maxStreams: 10 }) });
      await cached('1', add(1));
      const seen = reads(here);
      // When it writes again, then it decides on its state in memory: nothing read
      expect((await cached('1', add(2))).newState).toBe(3);
      expect(seen).toEqual([]);
      // When the other process writes the stream (to the revision the state in memory is not at), and a stream that
      // state does not cover, then the next write here reads and decides on every event
      await handler(there)('1', add(10));
      await there.appendToStream('c-2', [{ id: randomUUID(), type: 'Added', data: { n: 1 } }], { expectedRevision: 'no_stream' });
      expect((await cached('1', add(4))).newState).toBe(17);
      expect(seen.length).toBeGreaterThan(0);
      expect((await here.readStream('c-1')).events.map((e) => e.data.n)).toEqual([1, 2, 10, 4]);
    } finally {
      await here.close();
      await there.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs one stream's writes in this process one after another: a write begun while another is appending waits, then decides on its state", async () => {
    // Given a state in memory, and a first write whose append is held in the store
    const store = new MemoryEventStore();
    const cached = handler(store, { states: new StateCache<number>({ maxStreams: 10 }), retries: 0 });
    await cached('1', add(1));
    const append = store.appendToStream.bind(store);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = true;
    const appended: number[] = [];
    store.appendToStream = async (...args) => {
      if (holding) {
        holding = false;
        await held;
      }
      appended.push(...args[1].map((e) => e.data.n as number));
      return append(...args);
    };
    const first = cached('1', add(2));
    await waitUntil(() => !holding);
    // When a second write of the stream, and a write of another stream, begin meanwhile
    const second = cached('1', add(3));
    const other = await cached('2', add(7));
    // Then the other stream's is not held up, and the second waits for the first (no race: no retry is allowed here)
    expect(other.newState).toBe(7);
    expect(appended).toEqual([7]);
    release();
    expect((await first).newState).toBe(3);
    expect((await second).newState).toBe(6);
    expect(appended).toEqual([7, 2, 3]);
    // And a write that fails lets the next one of its stream go on
    const failing = handler(store, { states: new StateCache<number>({ maxStreams: 10 }) });
    store.appendToStream = async () => {
      throw new Error('disk full');
    };
    const failed = failing('1', add(1));
    const after = failing('1', add(1));
    await expect(failed).rejects.toThrow('disk full');
    await expect(after).rejects.toThrow('disk full');
  });

  it('notices a stream erased and written again, even past its old length, and reads it whole', async () => {
    const store = new MemoryEventStore();
    const cached = handler(store, { states: new StateCache<number>({ maxStreams: 10 }) });
    await cached('1', add(50));
    await store.deleteStream('c-1');
    for (const n of [1, 1, 1]) await handler(store)('1', add(n));
    expect((await cached('1', add(1))).newState).toBe(4);
  });

  it('forgets the least recently used streams beyond its size', async () => {
    const cache = new StateCache<number>({ maxStreams: 2 });
    await cache.remember('a', { revision: 0, lastEventId: 'x', state: 1 });
    await cache.remember('b', { revision: 0, lastEventId: 'y', state: 2 });
    await cache.load('a');
    await cache.remember('c', { revision: 0, lastEventId: 'z', state: 3 });
    expect([(await cache.load('a'))?.state, await cache.load('b'), (await cache.load('c'))?.state]).toEqual([1, undefined, 3]);
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
    await handler(store)('1', add(1));
    await projector.start();
    expect(seen).toEqual(['c-1@0']);
    await handler(store, { projector })('1', add(2));
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
    await handler(store)('2', add(1));
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
    for (const n of [1, 2, 3]) await handler(store)('1', add(n));
    await projector.start();
    expect(seen).toEqual([0, 1, 2]);
    expect(health).toEqual([false, false, false]);
    expect(projector.healthy()).toBe(true);
    await projector.stop();
  });
});

describe('Projector with a store that applies a batch and its checkpoint as one', () => {
  /** Checkpoints whose `atomically` tells what runs in it, and whose first commit fails. */
  function unitCheckpoints(log: string[]) {
    const inner = new MemoryReadModelStore().checkpoints();
    let inUnit = false;
    let commitFailures = 1;
    const checkpoints: CheckpointStore = {
      load: (name) => inner.load(name),
      save: async (name, position) => {
        log.push(`checkpoint ${position} ${inUnit ? 'in unit' : 'alone'}`);
        await inner.save(name, position);
      },
      async atomically(apply, save) {
        inUnit = true;
        try {
          await apply();
          const saved = await save();
          if (commitFailures-- > 0) throw new Error('commit failed');
          return saved;
        } finally {
          inUnit = false;
        }
      },
    };
    return { checkpoints, inner, inUnit: () => inUnit };
  }

  it('applies the events in hand and saves their checkpoint in one unit, again whole when it fails', async () => {
    const store = new MemoryEventStore();
    for (const n of [1, 2, 3]) await handler(store)('1', add(n));
    const log: string[] = [];
    const { checkpoints, inner, inUnit } = unitCheckpoints(log);
    const projector = new Projector(
      store,
      checkpoints,
      {
        name: 'p',
        streamPrefixes: ['c-'],
        apply: () => Promise.reject(new Error('applied one by one')),
        applyBatch: async (events) => void log.push(`batch of ${events.length} ${inUnit() ? 'in unit' : 'alone'}`),
      },
      { retryDelayMs: 1 },
    );
    await projector.start();
    const last = (await store.readStream('c-1')).events[2].position;
    expect(log).toEqual([`batch of 3 in unit`, `checkpoint ${last} in unit`, `batch of 3 in unit`, `checkpoint ${last} in unit`]);
    expect(await inner.load('p')).toBe(last);
    await projector.stop();
  });

  it('applies an event and saves its checkpoint in one unit when the projection takes events one by one', async () => {
    const store = new MemoryEventStore();
    await handler(store)('1', add(1));
    const log: string[] = [];
    const { checkpoints, inner, inUnit } = unitCheckpoints(log);
    const projector = new Projector(
      store,
      checkpoints,
      { name: 'p', streamPrefixes: ['c-'], apply: async (e) => void log.push(`event ${e.revision} ${inUnit() ? 'in unit' : 'alone'}`) },
      { retryDelayMs: 1 },
    );
    await projector.start();
    const position = (await store.readStream('c-1')).events[0].position;
    expect(log).toEqual(['event 0 in unit', `checkpoint ${position} in unit`, 'event 0 in unit', `checkpoint ${position} in unit`]);
    expect(await inner.load('p')).toBe(position);
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
        aggregate: counters(),
        details: (event) => ({ amount: event.data.n }),
      }),
    );
    await publisher.start();
    for (const n of [1, 2]) await handler(store)('ann', add(n));
    await handler(store, { category: 'other-' })('ann', add(1));
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

describe('commandHandler with snapshots', () => {
  const codec: SnapshotCodec<number> = {
    version: 1,
    encode: (total: number) => ({ total }),
    decode: (encoded: unknown) => Number((encoded as { total: number }).total),
  };
  const logged: string[] = [];
  const logger = { warn: (details: object) => void logged.push((details as { streamId: string }).streamId) };
  const statesWith = (every: number, store: SnapshotStore = new MemorySnapshotStore(), snapshotCodec = codec) =>
    new StateCache<number>({ maxStreams: 10, snapshots: { store, codec: snapshotCodec, every }, logger });
  /** A writer that remembers nothing between writes but the snapshots (a fresh process each time). */
  const fresh = (store: EventStore, snapshots: SnapshotStore, every: number, snapshotCodec = codec) => ({
    write: (id: string, n: number) => handler(store, { states: statesWith(every, snapshots, snapshotCodec) })(id, add(n)),
  });

  it('saves one every N events; a writer without the state in memory reads only what is newer', async () => {
    const store = new MemoryEventStore();
    const snapshots = new MemorySnapshotStore();
    for (let i = 0; i < 10; i++) await fresh(store, snapshots, 4).write('1', 1);
    expect(await snapshots.read('c-1')).toMatchObject({ version: 1, revision: 7, state: '{"total":8}' });
    const seen = reads(store);
    const result = await fresh(store, snapshots, 4).write('1', 1);
    expect(seen).toEqual([3]); // the snapshot's own last event, then revisions 8 and 9
    expect(result.newState).toBe(11);
  });

  it('saves one at once when a write had to fold N events or more (a long stream without a snapshot)', async () => {
    const store = new MemoryEventStore();
    for (let i = 0; i < 6; i++) await handler(store)('1', add(1));
    const snapshots = new MemorySnapshotStore();
    await fresh(store, snapshots, 5).write('1', 1);
    expect(await snapshots.read('c-1')).toMatchObject({ revision: 6, state: '{"total":7}' });
  });

  it('ignores a snapshot of another version, and one of a stream erased and written again', async () => {
    const store = new MemoryEventStore();
    const snapshots = new MemorySnapshotStore();
    for (let i = 0; i < 4; i++) await fresh(store, snapshots, 2).write('1', 10);
    expect((await fresh(store, snapshots, 2, { ...codec, version: 2 }).write('1', 1)).newState).toBe(41);
    await store.deleteStream('c-1');
    for (let i = 0; i < 5; i++) await handler(store)('1', add(1));
    expect((await fresh(store, snapshots, 100).write('1', 1)).newState).toBe(6);
  });

  it('ignores (and logs) a snapshot it cannot decode, and folds the whole stream', async () => {
    const store = new MemoryEventStore();
    for (let i = 0; i < 3; i++) await handler(store)('1', add(2));
    const last = (await store.readStream('c-1')).events[2];
    const saved = new MemorySnapshotStore();
    await saved.write('c-1', { version: 1, revision: 2, lastEventId: last.id, state: 'not json' });
    logged.length = 0;
    expect((await fresh(store, saved, 100).write('1', 1)).newState).toBe(7);
    expect(logged).toEqual(['c-1']);
  });

  it('does not save at stop a state forgotten meanwhile (its user erased while the stop saves)', async () => {
    const store = new MemoryEventStore();
    const snapshots = new MemorySnapshotStore();
    const gate: { held?: Promise<void> } = {};
    const slowReads: SnapshotStore = Object.assign(Object.create(snapshots), {
      read: async (streamId: string) => {
        await gate.held;
        return snapshots.read(streamId);
      },
    });
    const states = statesWith(1000, slowReads);
    await handler(store, { states })('a', add(3));
    let release!: () => void;
    gate.held = new Promise<void>((resolve) => (release = resolve));
    const flushing = states.flush();
    await states.forget('c-a');
    release();
    expect(await flushing).toBe(0);
    expect(await snapshots.read('c-a')).toBeUndefined();
  });

  it("at a clean stop, saves the remembered states newer than their snapshots; forget removes a stream's", async () => {
    const store = new MemoryEventStore();
    const snapshots = new MemorySnapshotStore();
    const states = statesWith(1000, snapshots);
    for (const id of ['a', 'b']) await handler(store, { states })(id, add(3));
    expect(await snapshots.read('c-a')).toBeUndefined();
    expect(await states.flush()).toBe(2);
    expect(await states.flush()).toBe(0);
    expect((await snapshots.read('c-b'))?.state).toBe('{"total":3}');
    await states.forget('c-b');
    expect(await snapshots.read('c-b')).toBeUndefined();
    expect(states.streamsInMemory()).toEqual(['c-a']);
  });
});
