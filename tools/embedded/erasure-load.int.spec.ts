import { bytesFoundUnder, distinctiveUserId } from '@udp/test-system';
import { embeddedForSuite, othersWriteAndRead, recentEntries } from './testing/load';

/**
 * Issue 27 #1 and #3, as the attacker did it on `npm start`: one user writes a long history through the API
 * (batches of 5,000), then `DELETE /api/data`, while other users write and read. The erasure answers within
 * ERASURE_TIMEOUT_MS, completes once (one run, however often it is asked again), other users' write-then-read stays
 * fast throughout, and no file under DATA_DIR holds the user afterwards. Then one user with one entry erases every
 * second: other users' requests stay fast (no rewrite of everyone's data per erasure on the event loop).
 *
 * Prints `[erasure] entries=… answer_ms=… done_ms=… runs=… others_p99_ms=… others_max_ms=… bytes_left=…` and
 * `[erasure-repeated] …`. ERASURE_LOAD_ENTRIES sets the history's length (default 50,000).
 */
// The default erasure timeout (10 s); rate limits as shipped, the load spread over many users.
const { dataDir, system, call } = embeddedForSuite('erasure-load', { LOG_LEVEL: 'info' });
const ENTRIES = Number(process.env.ERASURE_LOAD_ENTRIES ?? 50_000);
const REPEATED_S = Number(process.env.ERASURE_REPEATED_S ?? 30);
jest.setTimeout(300_000);

const erasedRuns = (service: string) =>
  system()
    .output('stdout')
    .split('\n')
    .filter((line) => line.includes(`"service":"${service}"`) && line.includes('"message":"user data erased"')).length;

async function eraseAndWait(who: string) {
  const started = performance.now();
  const answer = await call(who, 'DELETE', '/api/data');
  const answerMs = performance.now() - started;
  // 204: completed within ERASURE_TIMEOUT_MS; 202: accepted, still under way.
  if (answer.status === 204) return { answerMs, doneMs: answerMs };
  expect(answer.status).toBe(202);
  const { erasureId } = (await answer.json()) as { erasureId: string };
  // Polled every 50 ms: a client's pace, not a load of its own.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { status } = (await (await call(who, 'GET', `/api/data/erasure/${erasureId}`)).json()) as { status: string };
    if (status === 'completed') break;
    if (Date.now() > deadline) throw new Error(`erasure ${erasureId} still ${status} after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { answerMs, doneMs: performance.now() - started };
}

it(`erases ${ENTRIES} history entries within the timeout, once, while other users stay fast, and leaves no byte`, async () => {
  const user = distinctiveUserId('erased');
  // Watched in the last hours: every entry counts for trending, which the erasure takes it out of too.
  for (let from = 0; from < ENTRIES; from += 5000) {
    const data = recentEntries(user, from, Math.min(5000, ENTRIES - from));
    expect((await call(user, 'POST', '/api/history/v2/batch', { data })).status).toBe(204);
  }
  expect(((await (await call(user, 'GET', '/api/history/v2?limit=1')).json()) as { data: unknown[] }).data).toHaveLength(1);
  const runsBefore = erasedRuns('history-svc');

  const others = othersWriteAndRead(call);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const { answerMs, doneMs } = await eraseAndWait(user);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const load = await others.stop();

  const runs = erasedRuns('history-svc') - runsBefore;
  expect(((await (await call(user, 'GET', '/api/history/v2?with_deleted=true')).json()) as { data: unknown[] }).data).toEqual([]);
  const bytesLeft = bytesFoundUnder(dataDir, [user]).length;
  process.stdout.write(
    `[erasure] entries=${ENTRIES} answer_ms=${Math.round(answerMs)} done_ms=${Math.round(doneMs)} runs=${runs} ` +
      `others_p99_ms=${load.p99} others_max_ms=${load.max} bytes_left=${bytesLeft} (others: ${load.count} write+read; ` +
      `targets: answer_ms < 10000, others_p99_ms < 100, others_max_ms < 300)\n`,
  );
  // What holds on any machine, busy or not: one run, nothing refused, no byte left, no stall of seconds. The targets
  // are printed above (the bench's line; docs/erasure.md): a loaded machine moves them, not these.
  expect(runs).toBe(1);
  expect(load.failures).toEqual([]);
  expect(load.max).toBeLessThan(5000);
  expect(bytesLeft).toBe(0);
});

it(`erases a one-entry user every second for ${REPEATED_S} s while other users stay fast`, async () => {
  const others = othersWriteAndRead(call);
  const erasers = Array.from({ length: REPEATED_S }, () => distinctiveUserId('again'));
  const started = Date.now();
  const erasures: Array<Promise<unknown>> = [];
  for (const [i, who] of erasers.entries()) {
    const wrote = await call(who, 'POST', '/api/history/v2', { item_id: `urn:${who}:1`, last_playback_position: 1 });
    expect([wrote.status, wrote.ok ? '' : await wrote.text()]).toEqual([200, '']);
    // Not waited for: the next one goes a second after this one, whatever this one takes.
    erasures.push(eraseAndWait(who));
    const next = started + (i + 1) * 1000;
    if (next > Date.now()) await new Promise((resolve) => setTimeout(resolve, next - Date.now()));
  }
  const load = await others.stop();
  await Promise.all(erasures);
  const bytesLeft = bytesFoundUnder(dataDir, erasers).length;
  process.stdout.write(
    `[erasure-repeated] erasures=${erasers.length} seconds=${Math.round((Date.now() - started) / 1000)} ` +
      `others_p99_ms=${load.p99} others_max_ms=${load.max} bytes_left=${bytesLeft} (others: ${load.count} write+read; ` +
      `target: others_p99_ms < 50)\n`,
  );
  expect(load.failures).toEqual([]);
  // No stall of seconds (an erasure that held the event loop or the writer's lock); the p99's target is printed.
  expect(load.max).toBeLessThan(5000);
  expect(bytesLeft).toBe(0);
});
