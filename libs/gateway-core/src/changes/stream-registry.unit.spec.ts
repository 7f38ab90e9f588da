import { InProcessBus } from '@udp/bus';
import { MemoryReadModelStore } from '@udp/readmodel';
import { createLogger } from '@udp/telemetry';
import { waitUntil } from '@udp/test-kit';
import { SharedStreamRegistry } from './stream-registry';

/**
 * Two gateway replicas' registries over one store and one bus (as MongoDB and Kafka in the distributed mode), a cap of
 * two streams per user, the clock in the test's hand: the user's oldest stream beyond the cap ends wherever it is.
 */
describe('streams per user across replicas', () => {
  let clock = 1_000_000;
  let store: MemoryReadModelStore;
  let bus: InProcessBus;
  let running: SharedStreamRegistry[];
  /** The streams each replica was asked to end, as `user/stream`. */
  let ended: Record<string, string[]>;

  const replica = async (name: string) => {
    const registry = new SharedStreamRegistry({
      store,
      bus,
      replica: name,
      maxStreamsPerUser: 2,
      logger: createLogger('test', 'silent'),
      now: () => clock,
      renewMs: 10_000,
    });
    ended[name] = [];
    await registry.start((user, stream) => {
      ended[name].push(`${user}/${stream}`);
      // As the hub does once the stream has ended.
      void registry.closed(stream);
    });
    running.push(registry);
    return registry;
  };
  const rows = () => store.collection<{ _id: string; user_id: string }>('change_streams').find({});

  beforeEach(() => {
    store = new MemoryReadModelStore();
    bus = new InProcessBus();
    running = [];
    ended = {};
  });
  afterEach(async () => {
    for (const registry of running) await registry.stop();
    await bus.close();
  });

  it("ends the user's oldest stream beyond the cap at the replica that holds it", async () => {
    const [a, b] = [await replica('a'), await replica('b')];
    await a.opened('alice', 's1', clock++);
    await b.opened('alice', 's2', clock++);
    await b.opened('bob', 'x1', clock++);
    expect(ended).toEqual({ a: [], b: [] });
    await a.opened('alice', 's3', clock++);
    await waitUntil(() => ended.a.length === 1, 2000, 'the oldest ended at a');
    expect(ended).toEqual({ a: ['alice/s1'], b: [] });
    await waitUntil(async () => (await rows()).length === 3, 2000, 's1 forgotten');
    await a.opened('alice', 's4', clock++);
    await waitUntil(() => ended.b.length === 1, 2000, 'the oldest ended at b');
    expect(ended).toEqual({ a: ['alice/s1'], b: ['alice/s2'] });
  });

  it("stops counting a replica's streams once it stopped saying it is alive, and forgets them", async () => {
    const [a, b] = [await replica('a'), await replica('b')];
    await b.opened('alice', 's1', clock++);
    await b.opened('alice', 's2', clock++);
    // b dies without a word: its timer no longer runs, its rows stay.
    running = running.filter((r) => r !== b);
    clock += 31_000;
    await a.opened('alice', 's3', clock++);
    await a.opened('alice', 's4', clock++);
    expect(ended).toEqual({ a: [], b: [] });
    expect((await rows()).map((r) => r._id).sort()).toEqual(['s3', 's4']);
    await b.stop();
  });

  it('leaves no row naming a user after forget, nor any of a stopped replica', async () => {
    const [a, b] = [await replica('a'), await replica('b')];
    await a.opened('alice', 's1', clock++);
    await b.opened('alice', 's2', clock++);
    await b.opened('bob', 'x1', clock++);
    await a.forget('alice');
    expect((await rows()).map((r) => r._id)).toEqual(['x1']);
    await b.stop();
    running = running.filter((r) => r !== b);
    expect(await rows()).toEqual([]);
  });
});
