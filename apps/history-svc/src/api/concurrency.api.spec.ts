import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryEventStore, SqliteEventStore, type EventStore } from '@udp/eventstore';
import { given } from '@udp/test-kit';
import { startTestSystem } from '@udp/test-system';
import { createHistoryService } from '../app';

const dir = mkdtempSync(join(tmpdir(), 'udp-history-concurrency-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each<[string, () => EventStore]>([
  ['sqlite', () => new SqliteEventStore(join(dir, `${Date.now()}-${Math.random()}.sqlite`))],
  ['memory', () => new MemoryEventStore()],
])('24 parallel writes for one user (%s event store)', (_name, openStore) => {
  it('answers each with 2xx or 429 (with Retry-After), and stores exactly the acknowledged items', async () => {
    const system = await startTestSystem([
      { prefixes: ['/api/history'], create: (deps) => createHistoryService(deps), adapters: { store: openStore() } },
    ]);
    try {
      const auth = await system.auth('carol');
      const write = (i: number) =>
        i % 3 === 0
          ? system.http
              .post('/api/history/v2/batch')
              .set('authorization', auth)
              .send({ data: [{ item_id: `item-${i}`, date: 1000 + i }] })
          : system.http
              .post('/api/history/v2')
              .set('authorization', auth)
              .send({ item_id: `item-${i}`, date: 1000 + i });
      const storedItems = async () => {
        const stored = await system.http.get('/api/history/v2?limit=1000&with_deleted=true').set('authorization', auth);
        return stored.body.data.map((i: { item_id: string }) => i.item_id).sort();
      };

      // Given carol's empty history, when 24 writes arrive at once, then each is answered, the acknowledged ones stored.
      await given(async () => expect(await storedItems()).toEqual([]))
        .when(() => Promise.all(Array.from({ length: 24 }, (_, i) => write(i))))
        .then(async (answers) => {
          const statuses = answers.map((a) => a.status);
          expect(statuses.every((s) => s === 200 || s === 204 || s === 429)).toBe(true);
          for (const refused of answers.filter((a) => a.status === 429)) {
            expect(refused.headers['retry-after']).toBe('1');
            expect(refused.body.status).toBe(429);
          }
          const acknowledged = answers.flatMap((a, i) => (a.status < 300 ? [`item-${i}`] : [])).sort();
          expect(await storedItems()).toEqual(acknowledged);
          expect(acknowledged.length).toBeGreaterThan(0);
        });
    } finally {
      await system.stop();
    }
  });
});

describe('an update while another of the same history is under way (the spec: "a concurrent second update receives 429")', () => {
  it('is refused at once, without reading the history; another user, and the next update after, go through', async () => {
    // Given a store whose first append is held until released, and which counts the reads of carol's history
    const inner = new MemoryEventStore();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    let reads = 0;
    const store: EventStore = Object.assign(Object.create(inner) as EventStore, {
      readStream: (...args: Parameters<EventStore['readStream']>) => {
        if (args[0].includes('carol')) reads++;
        return inner.readStream(...args);
      },
      appendToStream: async (...args: Parameters<EventStore['appendToStream']>) => {
        if (!holding) {
          holding = true;
          await held;
        }
        return inner.appendToStream(...args);
      },
    });
    const system = await startTestSystem([
      { prefixes: ['/api/history'], create: (deps) => createHistoryService(deps), adapters: { store } },
    ]);
    try {
      const [carol, dave] = [await system.auth('carol'), await system.auth('dave')];
      const post = (auth: string, item: string) =>
        system.http.post('/api/history/v2').set('authorization', auth).send({ item_id: item, date: 1000 });
      const first = post(carol, 'first').then((answer) => answer);
      while (!holding) await new Promise((resolve) => setImmediate(resolve));
      const readsBefore = reads;
      // When a second update of carol's history arrives while the first is appending
      const second = await post(carol, 'second');
      // Then it is answered 429 at once, with Retry-After, having read nothing
      expect(second.status).toBe(429);
      expect(second.headers['retry-after']).toBe('1');
      expect(reads).toBe(readsBefore);
      // And another user's update is not held up by carol's
      expect((await post(dave, 'other')).status).toBe(200);
      release();
      expect((await first).status).toBe(200);
      // And once the first is answered, the next update goes through; only the acknowledged ones are stored
      expect((await post(carol, 'third')).status).toBe(200);
      const stored = await system.http.get('/api/history/v2?limit=10').set('authorization', carol);
      expect(stored.body.data.map((e: { item_id: string }) => e.item_id).sort()).toEqual(['first', 'third']);
    } finally {
      await system.stop();
    }
  });
});
