import { waitUntil } from '@udp/test-kit';
import { describeOutage, expectNothingLost } from './outage';
import { awaitHealth, control, servers, type Store, Writers } from './support';

/**
 * The Kafka broker stops while clients write and history-svc projects and publishes, then starts again. Writes
 * do not need the bus (the event store has them; the publisher follows it from a checkpoint), so they go on
 * being acknowledged; /health/ names the bus meanwhile; after the restart the publisher catches up by itself
 * and every change reaches the topic, none lost, each applied once. Once with the event store file and FerretDB, once
 * with the events and read models on PostgreSQL (skipped, and said so, where with-servers.sh started none).
 */
describe.each<Store>(['file', 'postgres'])('store=%s', (store) => {
  describeOutage(
    `Kafka broker stopped and restarted (store=${store})`,
    `kafka_${store}`,
    () => servers.kafkaScript!,
    (outage) => {
      it('keeps acknowledging writes, names the bus while it is down, and publishes every change once it is back', async () => {
        const writers = new Writers([outage.service], outage.settings.INTERNAL_AUTH_SECRET, outage.users);
        await waitUntil(() => writers.total >= 30, 60_000, '30 writes before the outage');

        await control(servers.kafkaScript!, 'stop');
        const down = await awaitHealth(outage.service, { status: 503, down: 'bus' }, 30_000);
        expect(down.checks).toMatchObject({ event_store: 'UP', read_models: 'UP', bus: 'DOWN' });
        const before = writers.total;
        await waitUntil(() => writers.total >= before + 30, 60_000, '30 writes acknowledged while the broker is down');

        await control(servers.kafkaScript!, 'start');
        await awaitHealth(outage.service, { status: 200 }, 90_000);
        const afterRestart = writers.total;
        await waitUntil(() => writers.total >= afterRestart + 30, 60_000, '30 writes after the restart');
        await writers.stop();

        expect([...writers.statuses.keys()].filter((s) => s !== 200)).toEqual([]);
        const repeats = await expectNothingLost(outage, writers);
        console.log(
          `[faults] Kafka outage (store=${store}): ${writers.total} writes acknowledged (${afterRestart - before} while the broker was down), ` +
            `${outage.topic.messages.length} Kafka deliveries, ${repeats} repeated deliveries (same event id), 0 lost`,
        );
      });
    },
    store,
  );
});
