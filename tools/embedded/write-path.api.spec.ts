import { mkdtempSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileSecret, signDevToken } from '@udp/auth';
import { given } from '@udp/test-kit';
import { start } from './host';

/**
 * Which of our files a request passes through, in the embedded mode (issue 19's "a newcomer can name the files of
 * POST /api/history/v2"): the system runs in this process, one request is sent after a warm-up, and V8's precise
 * coverage names every file of apps/ and libs/ whose code ran between the request and its answer, the write's
 * projection included (the answer waits for it). The SQLite writer's file runs in its own thread, outside this
 * isolate: it is named separately. The files are printed by part (docs/architecture.md, "The path of a write"):
 * "route to store and back" is what a newcomer reads to follow the write, from the service's route to the two store
 * ports and back; the gateway and the service's edge before the route, the stores' adapters behind the ports,
 * observation (spans, metrics), module index files, and the change publisher (the answer does not wait for it) are
 * counted apart.
 */
const root = join(__dirname, '..', '..');
const dataDir = mkdtempSync(join(tmpdir(), 'udp-write-path-'));
let system: Awaited<ReturnType<typeof start>>;
let base = '';
let authorization = '';

beforeAll(async () => {
  system = await start({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' }, { announce: false });
  base = `http://127.0.0.1:${system.port}`;
  authorization = `Bearer ${await signDevToken(fileSecret(dataDir, 'jwt-signing'), 'path-user')}`;
}, 60_000);
afterAll(async () => {
  await system?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The part of the path a file belongs to; the rest is the route to the store and back. */
const PARTS: Array<[string, RegExp]> = [
  ['module index files', /\/index\.ts$/],
  [
    'edge (gateway, service edge)',
    /^libs\/(gateway-core\/(?!src\/changes\/)|auth\/)|^libs\/http-kit\/src\/(service-edge|service-app|request-observation)\.ts$/,
  ],
  ['observation', /^libs\/telemetry\/|^libs\/runtime\/src\/traced-adapters\.ts$/],
  ['store adapters', /^libs\/(eventstore|readmodel)\//],
  // The gateway's live sync hears of the change (issue 29): it may run before the answer is sent, never for it.
  [
    'after the answer (change publisher, live sync)',
    /^libs\/bus\/|^libs\/eventsourcing\/src\/integration-publisher\.ts$|^libs\/gateway-core\/src\/changes\//,
  ],
  // A timer of another service that happened to fire meanwhile (a sweep, a resume): not this request's path.
  ['other services', /^apps\/(?!history-svc\/)/],
];
const partOf = (file: string) => PARTS.find(([, pattern]) => pattern.test(file))?.[0] ?? 'route to store and back';

const post = (itemId: string) =>
  fetch(`${base}/api/history/v2`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ item_id: itemId, last_playback_position: 12 }),
  });

/** Our source files (apps/, libs/) whose functions ran during `work`, relative to the repository. */
async function filesRunBy(work: () => Promise<void>): Promise<string[]> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    await session.post('Profiler.takePreciseCoverage'); // resets the counts: only `work` is counted
    await work();
    const { result } = await session.post('Profiler.takePreciseCoverage');
    await session.post('Profiler.stopPreciseCoverage');
    const ran = result.filter((script) => script.functions.some((f) => f.ranges.some((r) => r.count > 0)));
    const ours = ran
      .map((script) => relative(root, script.url.replace(/^file:\/\//, '')))
      .filter((file) => /^(apps|libs)\//.test(file) && !file.includes('node_modules'));
    return [...new Set(ours)].sort();
  } finally {
    session.disconnect();
  }
}

it('POST /api/history/v2 passes through the files a newcomer finds from the README', () =>
  given(async () => {
    // Warm: modules loaded, the user's history and its caches made, as for any request after the first.
    for (let i = 0; i < 3; i++) expect((await post(`urn:warm:${i}`)).status).toBe(200);
  })
    .when(() =>
      filesRunBy(async () => {
        const answer = await post('urn:measured');
        expect(answer.status).toBe(200);
        expect(await answer.json()).toMatchObject({ item_id: 'urn:measured', last_playback_position: 12, deleted: false });
      }),
    )
    .then((files) => {
      const all = [...files, 'libs/eventstore/src/sqlite-writer.ts'];
      const byPart = new Map<string, string[]>();
      for (const file of all) byPart.set(partOf(file), [...(byPart.get(partOf(file)) ?? []), file]);
      const lines = [...byPart].map(([part, inPart]) => `  ${part}: ${inPart.length}\n${inPart.map((f) => `    ${f}`).join('\n')}`);
      process.stdout.write(`[write-path] POST /api/history/v2, embedded: ${all.length} files\n${lines.join('\n')}\n`);
      const routeToStore = byPart.get('route to store and back') ?? [];
      expect(routeToStore).toEqual(
        expect.arrayContaining(['apps/history-svc/src/api/routes.ts', 'libs/eventsourcing/src/command-handler.ts']),
      );
      expect(routeToStore).toContain('apps/history-svc/src/projections/history.ts');
      // Issue 19: at most 15 files from the route to the store and back (16 before it).
      expect(routeToStore.length).toBeLessThanOrEqual(15);
    }));
