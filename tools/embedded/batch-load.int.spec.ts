import type { StartedProcess } from '@udp/test-kit';
import { distinctiveUserId } from '@udp/test-system';
import { embeddedProcess } from './embedded-process';
import { othersWriteAndRead, recentEntries, systemCalls } from './testing/load';

/**
 * Issue 27 #7, as the attacker did it on `npm start`: two users post 5,000-entry batches back to back while other
 * users write and read. A batch's work (its 5,000 events projected into the read models) is applied in slices with
 * other requests let in between, so the others' write-then-read p99 stays under 50 ms. Prints `[batch-load] …`.
 */
const embedded = embeddedProcess('batch-load');
const BATCHES = Number(process.env.BATCH_LOAD_BATCHES ?? 8);
jest.setTimeout(180_000);

let system: StartedProcess;
beforeAll(async () => {
  embedded.build();
  system = await embedded.start({ LOG_LEVEL: 'warn' }, 120_000);
}, 180_000);
afterAll(async () => {
  await system?.stop();
  embedded.remove();
});

const call = systemCalls(() => system, embedded.dataDir);

it('keeps other users fast while two users post 5,000-entry batches back to back', async () => {
  const writers = [distinctiveUserId('batcher'), distinctiveUserId('batcher')];
  const others = othersWriteAndRead(call);
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
  const load = await others.stop();
  process.stdout.write(
    `[batch-load] batches=${BATCHES} of 5000 in ${Math.round(batchesMs)} ms; others p50_ms=${load.p50} p99_ms=${load.p99} ` +
      `max_ms=${load.max} (${load.count} write+read)\n`,
  );
  for (const who of writers) {
    const page = (await (await call(who, 'GET', '/api/history/v2?limit=1')).json()) as { data: Array<{ item_id: string }> };
    expect(page.data[0]?.item_id).toBe(`urn:${who}:${(BATCHES / 2) * 5000 - 1}`);
  }
  expect(load.failures).toEqual([]);
  expect(load.p99).toBeLessThan(50);
});
