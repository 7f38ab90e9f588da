import { mkdtempSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileSecret, signDevToken } from '@udp/auth';
import { given } from '@udp/test-kit';
import { start } from './host';

/**
 * Which of our files a request runs, in the embedded mode (issue 19's "a newcomer can name the files of POST
 * /api/history/v2", issue 28's "every file counted, nothing set apart"): the system runs in this process, one request
 * is sent after a warm-up, and V8's precise coverage names every file of apps/ and libs/ whose code ran between the
 * request and its answer: the edge, the route, the stores' adapters, spans and metrics, module index files, and the
 * asynchronous projectors and the change publisher where they ran meanwhile on the request's events. The SQLite
 * writer's file runs in its own thread, outside this isolate: it is added by name. Only another service's timer that
 * happened to fire meanwhile (a sweep, a resume) is left out: it is not this request's work.
 *
 * The list is printed, not kept anywhere by hand: docs/architecture.md's "The path of a write" tells the path in prose
 * with its key files. What is checked: the key files are on it, and the count may not grow.
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
    /^libs\/(gateway-core\/(?!src\/changes\/)|auth\/)|^libs\/http-kit\/src\/(service-edge|service-app)\.ts$/,
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
/** The most files a POST may run through (issue 28 measured 44 before it, and aims at 20; 44 after its first round, live sync's hub among them). */
const MOST_FILES = 44;

/** Issue 44's target for the count, printed beside it. */
const TARGET_FILES = 25;

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

it('POST /api/history/v2 runs through its key files, and through no more files than before', () =>
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
      const ours = all.filter((file) => partOf(file) !== 'other services');
      process.stdout.write(`[write-path] files=${ours.length} (target: ≤ ${TARGET_FILES})\n`);
      // The files docs/architecture.md's "The path of a write" names as the ones to read.
      expect(byPart.get('route to store and back') ?? []).toEqual(
        expect.arrayContaining([
          'apps/history-svc/src/api/routes.ts',
          'apps/history-svc/src/domain/decider.ts',
          'apps/history-svc/src/projections/history.ts',
          'libs/eventsourcing/src/command-handler.ts',
        ]),
      );
      // Issue 28: 44 files before it; its target is 20. The count may only go down.
      expect(ours.length).toBeLessThanOrEqual(MOST_FILES);
    }));
