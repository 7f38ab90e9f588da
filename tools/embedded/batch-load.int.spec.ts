import { distinctiveUserId } from '@udp/test-system';
import { embeddedForSuite, othersWriteAndRead, recentEntries } from './testing/load';

/**
 * Issue 27 #7, as the attacker did it on `npm start`: two users post 5,000-entry batches back to back while other
 * users read (and others write then read). A batch's work (its 5,000 events projected into the read models) is
 * applied in slices with other requests let in between, so the readers' p99 stays near 50 ms. Prints
 * `[batch-load] …`. The other writers' p99 too (issue 28): each write's own rows are applied inline, not behind the
 * batch's 5,000 events in the one projector.
 */
const { call } = embeddedForSuite('batch-load', { LOG_LEVEL: 'warn' });
const BATCHES = Number(process.env.BATCH_LOAD_BATCHES ?? 8);
jest.setTimeout(180_000);

it('keeps other users fast while two users post 5,000-entry batches back to back', async () => {
  const writers = [distinctiveUserId('batcher'), distinctiveUserId('batcher')];
  const readers = othersWriteAndRead(call, { write: false });
  const others = othersWriteAndRead(call, { loops: 2 });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const started = performance.now();
  await Promise.all(
    writers.map(async (who) => {
      for (let batch = 0; batch < BATCHES / 2; batch++) {
        const data = recentEntries(who, batch * 5000, 5000);
        expect((await call(who, 'POST', '/api/history/v2/batch', { data })).status).toBe(204);
      }
    }),
  );
  const batchesMs = performance.now() - started;
  const reads = await readers.stop();
  const load = await others.stop();
  process.stdout.write(
    `[batch-load] batches=${BATCHES} of 5000 in ${Math.round(batchesMs)} ms; readers p50_ms=${reads.p50} p99_ms=${reads.p99} ` +
      `max_ms=${reads.max} (${reads.count} reads); writers p50_ms=${load.p50} p99_ms=${load.p99} max_ms=${load.max} (${load.count} write+read); ` +
      `targets: readers p99_ms < 50, writers p99_ms < 50\n`,
  );
  for (const who of writers) {
    const page = (await (await call(who, 'GET', '/api/history/v2?limit=1')).json()) as { data: Array<{ item_id: string }> };
    expect(page.data[0]?.item_id).toBe(`urn:${who}:${(BATCHES / 2) * 5000 - 1}`);
  }
  expect([...reads.failures, ...load.failures]).toEqual([]);
  // What holds on any machine, busy or not: nobody waits seconds behind the batches (a write queued behind the whole
  // batch in one projector waited 836-3,251 ms). The targets are printed above, for the bench and CI's log.
  expect(reads.max).toBeLessThan(5000);
  expect(load.max).toBeLessThan(5000);
});
