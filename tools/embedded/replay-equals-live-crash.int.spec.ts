import { join } from 'node:path';
import request, { type Response, type Test } from 'supertest';
import { fileSecret, signDevToken } from '@udp/auth';
import { SqliteEventStore } from '@udp/eventstore';
import { SqliteReadModelStore } from '@udp/readmodel';
import type { StartedProcess } from '@udp/test-kit';
import { baseOf, embeddedProcess } from './embedded-process';
import {
  FIXED_SEED,
  Random,
  isAnswer,
  rebuildDifferences,
  runSettings,
  servedProblems,
  type Client,
  type DataKey,
  type Done,
  type Erasure,
  type Operation,
  type ServiceUnderReplay,
} from './testing/replay-equals-live';
import { historyMix, playlistsMix, preferencesMix, profileMix } from './testing/replay-services';
import { createHistoryService } from '../../apps/history-svc/src/app';
import { createPlaylistService } from '../../apps/playlist-svc/src/app';
import { createPreferenceService } from '../../apps/preference-svc/src/app';
import { createProfileService } from '../../apps/profile-svc/src/app';

/**
 * "Replay equals live" with a real kill -9: the embedded bundle as `npm start` runs it, every service written to at
 * once through the gateway, users erased through `DELETE /api/data`, and the process killed with SIGKILL while
 * requests (and erasures) are under way, then started again on the same data directory. After each round the system
 * is stopped, and each service's read-model file must equal its rebuild from the service's events file, and no
 * erased write may be served. The in-process suites (replay-equals-live.<service>.api.spec.ts) run the many
 * interleavings; this one is the few that only a real process can give (what the kernel leaves of a killed writer).
 *
 * REPLAY_CRASH_ROUNDS (default 3) and REPLAY_SEED choose the rounds; each round has users of its own on the same files.
 */
const embedded = embeddedProcess('replay-crash');
const { dataDir } = embedded;
const ROUNDS = Number(process.env.REPLAY_CRASH_ROUNDS ?? 3);
// REPLAY_SEED as the in-process suites read it (a number, or `random`).
const SEED = runSettings({ seed: FIXED_SEED, interleavings: ROUNDS }).seed;
// Built in this process only to rebuild each service's read models from its events file after a round.
const SERVICES: ServiceUnderReplay[] = [
  { ...historyMix, create: (deps) => createHistoryService(deps) },
  { ...playlistsMix, create: (deps) => createPlaylistService(deps) },
  { ...preferencesMix, create: (deps) => createPreferenceService(deps) },
  { ...profileMix, create: (deps) => createProfileService(deps) },
];
jest.setTimeout(120_000 + ROUNDS * 60_000);

beforeAll(() => embedded.build(), 120_000);
afterAll(() => embedded.remove());

// ERASURE_TIMEOUT_MS=0: DELETE /api/data answers 202 at once, so a kill can land while the participants erase.
const startEmbedded = () => embedded.start({ ERASURE_TIMEOUT_MS: '0' }, 60_000);

/** A user's requests through the gateway of the process running now (none: the request fails, as a killed one does). */
function gatewayClient(system: () => StartedProcess, user: string): Client {
  // The token's secret is the data directory's: the same across restarts.
  const as = (test: Test) => test.timeout(20_000).set('authorization', `Bearer ${tokens.get(user)}`);
  const json = (test: Test, body: unknown) => as(test).set('content-type', 'application/json').send(JSON.stringify(body));
  return {
    get: (path) => as(request(baseOf(system())).get(path)),
    post: (path, body) => json(request(baseOf(system())).post(path), body),
    put: (path, body) => json(request(baseOf(system())).put(path), body),
    delete: (path) => as(request(baseOf(system())).delete(path)),
  };
}
const tokens = new Map<string, string>();

/** An erasure asked for through the API: its id once answered, and when it was seen completed. */
interface Asked {
  user: string;
  erasureId?: string;
  requestedAt: number;
  confirmedAt?: number;
}

async function round(index: number): Promise<string[]> {
  const random = new Random(SEED + index);
  let tick = 0;
  const clock = () => ++tick;
  const users = Array.from({ length: random.int(2, 3) }, (_, i) => `r${index}u${i + 1}`);
  for (const user of users) tokens.set(user, await signDevToken(fileSecret(dataDir, 'jwt-signing'), user));
  let system = await startEmbedded();
  const client = (user: string) => gatewayClient(() => system, user);
  const done = new Map<string, Done[]>(SERVICES.map((s) => [s.service, []]));
  const asked: Asked[] = [];
  /** Users whose erasure request got no answer: whether it was taken is unknown, so what they are served is not checked. */
  const unsure = new Set<string>();
  const steps: string[] = [];
  const problems: string[] = [];
  let markers = 0;
  // Dates sent by clients strictly increase, so that of two writes sent one after the other the later is newer.
  let lastDate = 0;
  const later = () => (lastDate = Math.max(lastDate + 1, Date.now()));

  const draw = (): [ServiceUnderReplay, string, Operation] => {
    const subject = random.pick(SERVICES);
    const user = random.pick(users);
    const written = (done.get(subject.service) ?? [])
      .filter((d) => d.user === user && d.status >= 200 && d.status < 300)
      .flatMap((d) => d.operation.writes ?? []) as Array<{ marker: string; key: DataKey }>;
    // Markers unique across rounds too: the data directory keeps every round's users.
    const marker = () => `mk${index}x${++markers}k`;
    return [subject, user, subject.operation(user, { random, marker, written, now: later })];
  };
  const run = async ([subject, user, operation]: [ServiceUnderReplay, string, Operation]) => {
    const sentAt = clock();
    const res = await operation.send(client(user)).catch(() => ({ status: 0, body: null }) as unknown as Response);
    done.get(subject.service)!.push({ user, operation, sentAt, answeredAt: clock(), status: res.status });
    steps.push(`  ${user} ${subject.service} ${operation.name} -> ${res.status || 'no answer'}`);
    if (res.status !== 0 && !isAnswer(operation, res))
      problems.push(`${user} ${operation.name} answered ${res.status}: ${JSON.stringify(res.body)}`);
  };
  /** Waits for the erasures asked for to complete (after a restart the coordinator takes up the ones a kill cut off). */
  const settle = async () => {
    for (const erasure of asked.filter((e) => e.erasureId && e.confirmedAt === undefined)) {
      for (const deadline = Date.now() + 30_000; erasure.confirmedAt === undefined;) {
        const res = await client(erasure.user)
          .get(`/api/data/erasure/${erasure.erasureId}`)
          .catch(() => null);
        if (res?.body?.status === 'completed') erasure.confirmedAt = clock();
        else if (Date.now() > deadline || !res) return void problems.push(`the erasure of ${erasure.user} did not complete`);
        else await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };
  const erase = async (user: string) => {
    const erasure: Asked = { user, requestedAt: clock() };
    asked.push(erasure);
    const res = await client(user)
      .delete('/api/data')
      .catch(() => null);
    steps.push(`  erase ${user} -> ${res?.status ?? 'no answer'}`);
    if (!res) unsure.add(user);
    else if (res.status === 202) erasure.erasureId = res.body.erasureId;
    else if (res.status !== 409) problems.push(`DELETE /api/data answered ${res.status}: ${JSON.stringify(res.body)}`);
    if (erasure.erasureId) await settle();
  };
  const restart = async () => {
    system = await startEmbedded();
    await settle();
  };

  try {
    for (let step = 0; step < 30 && problems.length === 0; step++) {
      const r = random.next();
      const group = Array.from({ length: random.int(2, 4) }, draw);
      if (r < 0.12) {
        // kill -9 with the group's requests in flight, some ms after they were sent.
        const killAfter = random.int(0, 15);
        steps.push(`kill -9 ${killAfter} ms into:`);
        const running = Promise.all(group.map(run));
        await new Promise((resolve) => setTimeout(resolve, killAfter));
        system.child.kill('SIGKILL');
        await system.exited;
        await running;
        await restart();
      } else if (r < 0.25) {
        const user = random.pick(users);
        steps.push(`together (erasure of ${user}):`);
        await Promise.all([erase(user), ...group.slice(0, random.int(0, 2)).map(run)]);
      } else if (r < 0.5) {
        steps.push('together:');
        await Promise.all(group.map(run));
      } else {
        await run(group[0]);
      }
    }
    await settle();
    const erasures: Erasure[] = asked.flatMap((e) =>
      e.confirmedAt === undefined ? [] : [{ user: e.user, requestedAt: e.requestedAt, confirmedAt: e.confirmedAt }],
    );
    for (const subject of SERVICES)
      for (const user of users.filter((u) => !unsure.has(u)))
        problems.push(...(await servedProblems(subject, client(user), user, done.get(subject.service)!, erasures)));
  } finally {
    await system.stop();
  }
  // The read-model files as the stopped process left them, against their rebuild from its events.
  for (const subject of SERVICES) {
    const dir = join(dataDir, subject.service);
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    const live = await SqliteReadModelStore.open({ file: join(dir, 'read-models.sqlite'), head: () => store.highestPosition() });
    try {
      problems.push(...(await rebuildDifferences(subject, store, live, `${subject.service}, after kill -9`, Date.now)));
    } finally {
      await live.close();
      await store.close();
    }
  }
  const statuses: Record<string, number> = {};
  for (const d of [...done.values()].flat()) statuses[d.status] = (statuses[d.status] ?? 0) + 1;
  const kills = steps.filter((line) => line.startsWith('kill -9')).length;
  process.stderr.write(
    `round ${index}: ${kills} kills, ${asked.length} erasures asked, answers ${JSON.stringify(statuses)} (0: cut off by a kill)\n`,
  );
  if (process.env.REPLAY_VERBOSE) process.stderr.write(`${steps.join('\n')}\n`);
  return problems.length === 0
    ? []
    : [`round ${index} (REPLAY_SEED=${SEED}):\n${steps.join('\n')}\n  problems:\n    ${problems.join('\n    ')}`];
}

it(`given ${ROUNDS} rounds of writes to every service, erasures through DELETE /api/data and kill -9 with requests in flight, when the system is stopped after each, then each read-model file equals its rebuild from the events and nothing erased is served`, async () => {
  const failures: string[] = [];
  const started = performance.now();
  for (let index = 0; index < ROUNDS; index++) failures.push(...(await round(index)));
  process.stderr.write(
    `replay equals live, kill -9 of the embedded process: ${ROUNDS} rounds from seed ${SEED} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  expect(failures).toEqual([]);
});
