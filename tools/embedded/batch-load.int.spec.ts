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
      `max_ms=${reads.max} (${reads.count} reads); writers p50_ms=${load.p50} p99_ms=${load.p99} max_ms=${load.max} (${load.count} write+read)\n`,
  );
  for (const who of writers) {
    const page = (await (await call(who, 'GET', '/api/history/v2?limit=1')).json()) as { data: Array<{ item_id: string }> };
    expect(page.data[0]?.item_id).toBe(`urn:${who}:${(BATCHES / 2) * 5000 - 1}`);
  }
  expect([...reads.failures, ...load.failures]).toEqual([]);
  // The issue's target is 50 ms; on this 2-core machine the readers' p99 measured 39-59 ms (596 ms before the
  // projection and the long commands were sliced): asserted with room for a loaded CI machine.
  expect(reads.p99).toBeLessThan(100);
  // The other writers: 836-3,251 ms before issue 28 (each write waited behind the batch in the one projector), 164-233
  // ms before sliced work shared a budget a turn and a batch was committed alone (docs/performance.md), now 73-111 ms
  // on this 2-core machine otherwise idle (103-169 in CI). Issue 27's 50 ms is not met here; asserted with room, so that a
  // write waiting behind the batches again fails.
  expect(load.p99).toBeLessThan(300);
});
