import { InProcessBus, type ReceivedMessage } from '@udp/bus';
import { MemoryEventStore } from '@udp/eventstore';
import { waitUntil } from '@udp/test-kit';
import { startTestSystem } from '@udp/test-system';
import { createHistoryService } from '../app';
import { HISTORY_TOPIC } from '../projections/history-changes';

/**
 * A start with no read models (a new or lost read-model file) on the log of an earlier run. The change publisher has no
 * checkpoint then: on the embedded bus, which keeps nothing across a restart and whose consumers follow only what is
 * published while they run, it starts at the log's end (republishing 1,130,000 changes was a third of such a start's
 * reading of the log); on a durable bus (Kafka) it publishes the log again, at least once as ever.
 */
class DurableBus extends InProcessBus {
  override readonly durable: boolean = true;
}

async function startWith(store: MemoryEventStore, bus: InProcessBus) {
  const system = await startTestSystem([{ prefixes: ['/api/history'], create: createHistoryService, adapters: { store, bus } }]);
  return { system, alice: await system.auth('alice') };
}

const record = (system: Awaited<ReturnType<typeof startWith>>, itemId: string) =>
  system.system.http.post('/api/history/v2').set('authorization', system.alice).send({ item_id: itemId }).expect(200);

it.each([
  ['the embedded bus', [2], () => new InProcessBus(5)],
  ['a durable bus', [0, 1, 2], () => new DurableBus(5)],
])('publishes on %s, at a start without read models, the changes of revisions %j', async (_bus, expected, makeBus) => {
  const store = new MemoryEventStore();
  const before = await startWith(store, makeBus());
  await record(before, 'urn:old:1');
  await record(before, 'urn:old:2');
  await before.system.stop();

  // The next process: the same log, a bus of its own, read models from nothing (startTestSystem's default: empty).
  const bus = makeBus();
  const published: number[] = [];
  // Subscribed before the start, from the oldest message: whatever the publisher sends reaches it.
  const consumer = await bus.subscribe(HISTORY_TOPIC, 'watcher', async (message: ReceivedMessage) => {
    published.push((message.value as { revision: number }).revision);
  });
  const after = await startWith(store, bus);
  try {
    await record(after, 'urn:new');
    await waitUntil(() => published.includes(2), 5000, 'the new change published');
    expect(published).toEqual(expected);
    // The read model was rebuilt from the whole log all the same.
    const page = await after.system.http.get('/api/history/v2').set('authorization', after.alice).expect(200);
    expect((page.body as { data: Array<{ item_id: string }> }).data.map((e) => e.item_id).sort()).toEqual([
      'urn:new',
      'urn:old:1',
      'urn:old:2',
    ]);
  } finally {
    await consumer.stop();
    await after.system.stop();
  }
});
