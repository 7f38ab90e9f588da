import { IDENTITY_HEADER } from '@udp/auth';
import { type Collection, type Document, MemoryReadModelStore } from '@udp/readmodel';
import { type TestSystem, startTestSystem } from '@udp/test-system';
import request from 'supertest';
import { createHistoryService } from '../app';
import { HISTORY_COLLECTION } from '../projections/history';
import { T0 } from '../testing/history-system';

/**
 * `GET /internal/history/trending` (what the gateway's `trending` component calls, as the reserved principal
 * `udp:gateway`): the answer for a known history, and that it is served from the counts, not by reading entries.
 */
const DAY = 24 * 3600 * 1000;

/** Read models that count the reads of history entries made while `counting` is on. */
class CountingReadModels extends MemoryReadModelStore {
  counting = false;
  entryReads = 0;
  override collection<T extends Document>(name: string): Collection<T> {
    const collection = super.collection<T>(name);
    if (name !== HISTORY_COLLECTION) return collection;
    const counted =
      <A extends unknown[], R>(read: (...args: A) => Promise<R>) =>
      (...args: A) => {
        if (this.counting) this.entryReads++;
        return read(...args);
      };
    // The collection's other methods through its prototype chain.
    return Object.assign(Object.create(collection) as Collection<T>, {
      find: counted(collection.find.bind(collection)),
      count: counted(collection.count.bind(collection)),
    });
  }
}

let system: TestSystem;
let readModels: CountingReadModels;
const clock = { now: T0 };

beforeEach(async () => {
  clock.now = T0;
  readModels = new CountingReadModels();
  system = await startTestSystem([
    {
      prefixes: ['/api/history'],
      create: (deps) => createHistoryService({ ...deps, now: () => clock.now }),
      adapters: { readModels },
    },
  ]);
});
afterEach(() => system.stop());

/** The service itself (the gateway has no /internal route), called as the gateway's components call it. */
function trending(size?: number) {
  const deps = system.deps[0];
  return request(deps.serviceUrls!['/api/history'])
    .get(`/internal/history/trending${size ? `?size=${size}` : ''}`)
    .set(IDENTITY_HEADER, deps.identity.sign({ userId: 'udp:gateway' }));
}

async function given(history: Record<string, Array<{ item_id: string; date: number }>>) {
  for (const [user, items] of Object.entries(history)) {
    const auth = await system.auth(user);
    const res = await system.http.post('/api/history/v2/batch').set('authorization', auth).send({ data: items });
    expect(res.status).toBe(204);
  }
}

const watched = (item_id: string, daysAgo: number) => ({ item_id, date: T0 - daysAgo * DAY });

describe('given a known history of five users', () => {
  beforeEach(() =>
    given({
      alice: [watched('urn:hit', 1), watched('urn:three', 2), watched('urn:gone', 1), watched('urn:old', 8), watched('urn:few', 1)],
      bob: [watched('urn:hit', 2), watched('urn:three', 3), watched('urn:gone', 1), watched('urn:old', 9), watched('urn:few', 1)],
      carol: [watched('urn:hit', 3), watched('urn:three', 0.5), watched('urn:gone', 1), watched('urn:old', 10)],
      dave: [watched('urn:hit', 6), watched('urn:gone', 1)],
      erin: [watched('urn:hit', 0.25)],
    }),
  );

  it('when trending is asked, then it answers the items watched in the last 7 days by at least 3 users, most users first', async () => {
    const res = await trending();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      window_ms: 7 * DAY,
      min_users: 3,
      items: [
        { item_id: 'urn:hit', users: 5, date: T0 - 0.25 * DAY },
        { item_id: 'urn:gone', users: 4, date: T0 - DAY },
        { item_id: 'urn:three', users: 3, date: T0 - 0.5 * DAY },
      ],
    });
    expect((await trending(1)).body.items).toEqual([{ item_id: 'urn:hit', users: 5, date: T0 - 0.25 * DAY }]);
  });

  it('when users delete an item or their whole history, then they no longer count', async () => {
    const bob = await system.auth('bob');
    const carol = await system.auth('carol');
    expect((await system.http.delete('/api/history/v2/urn:gone').set('authorization', bob)).status).toBe(204);
    expect((await system.http.delete('/api/history/v2').set('authorization', carol)).status).toBe(204);
    expect((await trending()).body.items).toEqual([{ item_id: 'urn:hit', users: 4, date: T0 - 0.25 * DAY }]);
  });

  it('when days have passed, then the older watches have left the window', async () => {
    clock.now = T0 + 5.5 * DAY; // the window starts 1.5 days before T0: urn:hit keeps alice and erin, too few
    expect((await trending()).body.items).toEqual([{ item_id: 'urn:gone', users: 4, date: T0 - DAY }]);
  });

  it('when trending is asked, then no history entry is read: the answer comes from the counts per item and hour', async () => {
    readModels.counting = true;
    expect((await trending()).status).toBe(200);
    readModels.counting = false;
    expect(readModels.entryReads).toBe(0);
  });
});
