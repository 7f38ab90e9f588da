import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  MemoryEventStore,
  SqliteEventStore,
  type SubscriptionOptions,
  type EventHandler,
} from '@udp/eventstore';
import { given } from '@udp/test-kit';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createPreferenceService } from '../app';
import { preferenceStreamId } from '../domain/aggregate';

const P = '/api/preference';

/** 20 parallel PUTs to different paths of one document: their statuses, in the order sent. */
async function parallelPathWrites(system: TestSystem, auth: string, writers = 20) {
  const answers = await Promise.all(
    Array.from({ length: writers }, (_, i) =>
      system.http
        .put(`${P}/settings/field${i}`)
        .set('authorization', auth)
        .set('content-type', 'application/json')
        .send(JSON.stringify({ writer: i })),
    ),
  );
  return answers.map((a) => a.status);
}
/** The document as read back: every acknowledged value must be there. */
const settingsOf = async (system: TestSystem, auth: string) =>
  (await system.http.get(`${P}/settings`).set('authorization', auth)).body as Record<string, unknown>;

/** Delegates everything to another store; the test doubles below change one method. */
class DelegatingStore implements EventStore {
  constructor(readonly inner: EventStore) {}
  readStream(streamId: string) {
    return this.inner.readStream(streamId);
  }
  appendToStream(streamId: string, events: EventToAppend[], options: { expectedRevision: ExpectedRevision }) {
    return this.inner.appendToStream(streamId, events, options);
  }
  deleteStream(streamId: string) {
    return this.inner.deleteStream(streamId);
  }
  listStreams(prefix: string) {
    return this.inner.listStreams(prefix);
  }
  subscribe(options: SubscriptionOptions, handler: EventHandler) {
    return this.inner.subscribe(options, handler);
  }
  ping() {
    return this.inner.ping();
  }
  close() {
    return this.inner.close();
  }
}

/**
 * In one process a read and the append after it run without another request in between, so parallel
 * requests would never race. This store holds the first `parties` reads until all of them have read:
 * every writer then decides on the same revision, as parallel writers on a networked store do.
 */
class RacingStore extends DelegatingStore {
  private waiting: Array<() => void> = [];
  constructor(
    inner: EventStore,
    private parties: number,
  ) {
    super(inner);
  }
  override async readStream(streamId: string) {
    const read = await this.inner.readStream(streamId);
    if (this.parties > 0) {
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        if (this.waiting.length === this.parties) {
          this.parties = 0;
          for (const release of this.waiting) release();
        }
      });
    }
    return read;
  }
}

describe.each([
  ['memory', () => ({ store: new MemoryEventStore() as EventStore, cleanup: () => undefined })],
  [
    'SQLite',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'preference-concurrency-'));
      return {
        store: new SqliteEventStore(join(dir, 'events.sqlite')) as EventStore,
        cleanup: () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  ],
])('20 parallel PUTs to different paths of one document (%s event store)', (_name, makeStore) => {
  let system: TestSystem | undefined;
  let cleanup = () => undefined as void;

  async function start(writeRetries?: number) {
    const made = makeStore();
    cleanup = made.cleanup;
    const store = new RacingStore(made.store, 20);
    system = await startTestSystem([
      { prefixes: [P], adapters: { store }, create: (deps) => createPreferenceService({ ...deps, writeRetries, writesSideBySide: true }) },
    ]);
    return system;
  }
  afterEach(async () => {
    await system?.stop();
    cleanup();
  });

  it('never drops an acknowledged change: all 20 land, with the default retries', async () => {
    await given(async () => {
      const running = await start();
      return { running, alice: await running.auth('alice') };
    })
      .when(({ running, alice }) => parallelPathWrites(running, alice))
      .then(async (statuses, { running, alice }) => {
        expect(statuses.filter((s) => s === 201)).toHaveLength(1);
        expect(statuses.filter((s) => s === 200)).toHaveLength(19);
        expect(await settingsOf(running, alice)).toEqual(
          Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`field${i}`, { writer: i }])),
        );
      });
  });

  it('without retries, the 19 losers get 429 and leave no trace; the acknowledged value is there', async () => {
    await given(async () => {
      const running = await start(0);
      return { running, alice: await running.auth('alice') };
    })
      .when(({ running, alice }) => parallelPathWrites(running, alice))
      .then(async (statuses, { running, alice }) => {
        expect(statuses.filter((s) => s === 429)).toHaveLength(19);
        const acknowledged = statuses.flatMap((s, i) => (s === 429 ? [] : [`field${i}`]));
        expect(acknowledged).toHaveLength(1);
        expect(Object.keys(await settingsOf(running, alice))).toEqual(acknowledged);
      });
  });
});

/**
 * A store where another writer gets in between our read and our append, a given number of times:
 * a deterministic way to lose races.
 */
class InterferingStore extends DelegatingStore {
  interferences = 0;
  private reads = 0;
  constructor() {
    super(new MemoryEventStore());
  }

  override async readStream(streamId: string) {
    const read = await this.inner.readStream(streamId);
    this.reads++;
    if (this.interferences > 0) {
      this.interferences--;
      const document = {
        ...(read.events.length ? (read.events[read.events.length - 1].data.document as object) : {}),
        [`other${this.reads}`]: true,
      };
      await this.inner.appendToStream(
        streamId,
        [
          {
            id: randomUUID(),
            type: 'PreferenceWritten',
            data: { key: 'settings', document, operation: { kind: 'replace' } },
            metadata: { owner: { userId: 'alice', key: 'settings' } },
          },
        ],
        { expectedRevision: 'any' },
      );
    }
    return read;
  }
}

describe('losing a race', () => {
  let system: TestSystem;
  let store: InterferingStore;
  let alice: string;

  /** Alice's settings document { mine: 0 }, behind a store that lets another writer in: the state every test starts from. */
  beforeEach(async () => {
    store = new InterferingStore();
    system = await startTestSystem([
      { prefixes: [P], adapters: { store }, create: (deps) => createPreferenceService({ ...deps, writeRetries: 3 }) },
    ]);
    alice = await system.auth('alice');
    await system.http.put(`${P}/settings`).set('authorization', alice).send({ mine: 0 });
  });
  afterEach(() => system.stop());
  const putMine = () => system.http.put(`${P}/settings/mine`).set('authorization', alice).set('content-type', 'application/json').send('1');

  it("re-reads and re-applies the change on the new document, keeping the other writer's change", async () => {
    await given(() => {
      store.interferences = 3;
    })
      .when(putMine)
      .then(async (res) => {
        expect(res.status).toBe(200);
        const document = await settingsOf(system, alice);
        expect(document.mine).toBe(1);
        expect(Object.keys(document).filter((k) => k.startsWith('other'))).toHaveLength(3);
      });
  });

  it('answers 429 with Retry-After once the retries are spent, and the change leaves no trace', async () => {
    await given(() => {
      store.interferences = 4;
    })
      .when(putMine)
      .then(async (res) => {
        expect(res.status).toBe(429);
        expect(res.headers['retry-after']).toBe('1');
        const stream = await store.inner.readStream(preferenceStreamId('alice', 'settings'));
        expect(stream.events.map((e) => (e.data.document as Record<string, unknown>).mine)).toEqual([0, 0, 0, 0, 0]);
      });
  });
});
