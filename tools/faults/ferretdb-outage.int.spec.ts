import { waitUntil } from '@udp/test-kit';
import { describeOutage, expectNothingLost } from './outage';
import { awaitHealth, control, servers, Writers } from './support';

/**
 * The read-model server (FerretDB, MongoDB wire) stops while clients write, then starts again: writes during
 * the outage answer 503 (never acknowledged and then lost), /health/ names the read models, and everything
 * recovers by itself: read models and the Kafka topic end up with every acknowledged write, each once.
 */
describeOutage(
  'FerretDB stopped and restarted',
  'ferret',
  () => servers.ferretdbScript!,
  (outage) => {
    it('refuses writes with 503 during the outage, names the read models, and loses nothing or applies it twice', async () => {
      const writers = new Writers([outage.service], outage.settings.INTERNAL_AUTH_SECRET, outage.users);
      await waitUntil(() => writers.total >= 30, 60_000, '30 writes before the outage');

      await control(servers.ferretdbScript!, 'stop');
      const stoppedAt = { ...Object.fromEntries(writers.statuses) };
      const down = await awaitHealth(outage.service, { status: 503, down: 'read_models' }, 30_000);
      expect(down.checks).toMatchObject({ event_store: 'UP', read_models: 'DOWN' });
      await waitUntil(() => writers.count(503) >= 10, 60_000, '10 writes refused during the outage');
      const acknowledgedInOutage = writers.count(200) - (stoppedAt[200] ?? 0);

      await control(servers.ferretdbScript!, 'start');
      await awaitHealth(outage.service, { status: 200 }, 60_000);
      const afterRestart = writers.count(200);
      await waitUntil(() => writers.count(200) >= afterRestart + 30, 60_000, '30 writes after the restart');
      await writers.stop();

      // Never a 500: a store that is down is a 503 and nothing stored.
      expect([...writers.statuses.keys()].filter((s) => s !== 200 && s !== 503)).toEqual([]);
      // The 503s stored nothing: only acknowledged writes are in the read model and on Kafka.
      const repeats = await expectNothingLost(outage, writers);
      console.log(
        `[faults] FerretDB outage: ${writers.total} writes acknowledged (${acknowledgedInOutage} while it stopped), ${writers.count(503)} refused with 503, ` +
          `${outage.topic.messages.length} Kafka deliveries, ${repeats} repeated deliveries (same event id), 0 lost`,
      );
    });
  },
);
