import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `npm test` on a Node that cannot run TypeScript (the Node 20.19 the README allows): the SQLite stores start their
 * worker threads (the event store's writer, the read models' checkpointer) from bundles that jest's global setup makes
 * (tools/jest-global-setup.js). A fixture spec opens both stores under the real jest with the workspace's preset, on
 * this Node with its type stripping turned off (on Node 20 there is none to turn off).
 */
const root = join(__dirname, '..', '..');
// Inside the repository: the preset's transform and the stores' packages are found from there.
const dir = join(root, 'tmp', `sqlite-workers-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fixture = `
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@udp/eventstore';
import { SqliteReadModelStore } from '@udp/readmodel';

it('opens the SQLite event store and read models, writes and reads back', async () => {
  expect(Boolean((process.features as { typescript?: unknown }).typescript)).toBe(false);
  const data = mkdtempSync(join(tmpdir(), 'udp-workers-'));
  const events = new SqliteEventStore(join(data, 'events.sqlite'));
  await events.appendToStream('note-1', [{ id: 'e1', type: 'NoteWritten', data: { text: 'hi' } }], { expectedRevision: 'no_stream' });
  expect((await events.readStream('note-1')).events.map((e) => e.data)).toEqual([{ text: 'hi' }]);
  await events.close();
  const models = await SqliteReadModelStore.open({ file: join(data, 'read-models.sqlite') });
  await models.collection<{ _id: string; revision: number }>('notes').upsertIfNewer({ _id: 'n1', revision: 0 });
  await models.checkpoints().save('notes', 1n);
  await models.close();
});
`;

it('runs a suite that opens the SQLite stores on a Node without type stripping', () => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'stores.spec.ts'), fixture);
  writeFileSync(
    join(dir, 'jest.config.js'),
    `module.exports = { ...require(${JSON.stringify(join(root, 'jest.preset.js'))}), rootDir: __dirname };\n`,
  );
  const typeStripping = Boolean((process.features as { typescript?: unknown }).typescript);
  const run = spawnSync(
    process.execPath,
    [join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '-c', join(dir, 'jest.config.js'), '--ci'],
    {
      cwd: root,
      env: {
        ...process.env,
        // Every process of the run (jest, its workers, their threads) as on Node 20: no TypeScript.
        NODE_OPTIONS: [process.env.NODE_OPTIONS, typeStripping ? '--no-experimental-strip-types' : ''].filter(Boolean).join(' '),
        // Not this run's bundles, if it has any: the fixture's run must make its own.
        WORKER_BUNDLES_DIR: '',
        JEST_RESULTS_DIR: join(dir, 'results'),
        FORCE_COLOR: '0',
      },
      encoding: 'utf8',
      timeout: 120_000,
    },
  );

  expect(run.stderr).not.toMatch(/runs from its TypeScript source/);
  expect(run.status).toBe(0);
  expect(JSON.parse(readFileSync(join(dir, 'results', `tmp__sqlite-workers-${process.pid}.json`), 'utf8'))).toMatchObject({
    passed: 1,
    failed: 0,
  });
}, 150_000);
