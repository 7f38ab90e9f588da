import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The layout rule as `npm run lint` runs it, on a workspace made of the given files. */
const rule = join(__dirname, 'layout.mjs');
let root: string;
beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'udp-layout-'))));
afterEach(() => rmSync(root, { recursive: true, force: true }));

function workspace(files: string[]) {
  for (const file of files) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), '');
  }
  const run = spawnSync(process.execPath, [rule, root], { encoding: 'utf8' });
  return { status: run.status, problems: run.stderr };
}

const service = [
  'apps/history-svc/src/main.ts',
  'apps/history-svc/src/app.ts',
  'apps/history-svc/src/config.ts',
  'apps/history-svc/src/domain/aggregate.ts',
  'apps/history-svc/src/domain/decider.ts',
  'apps/history-svc/src/domain/decider.unit.spec.ts',
  'apps/history-svc/src/api/routes.ts',
  'apps/history-svc/src/api/routes.api.spec.ts',
  'apps/history-svc/src/api/erasure.int.spec.ts',
  'apps/history-svc/src/projections/history.ts',
  'apps/history-svc/src/projections/history.unit.spec.ts',
  'apps/history-svc/src/testing/history-system.ts',
  'apps/history-svc/src/main.crash.int.spec.ts',
];
const gateway = ['apps/gateway/src/main.ts', 'apps/gateway/src/config.ts', 'apps/gateway/src/cli/token.ts'];

it('accepts the layout of docs/architecture.md, and the workspace itself', () => {
  expect(workspace([...service, ...gateway])).toEqual({ status: 0, problems: '' });
  expect(spawnSync(process.execPath, [rule], { encoding: 'utf8' }).stderr).toBe('');
});

it.each([
  ['apps/history-svc/src/crash.int.spec.ts', 'named main.<what>.<unit|api|int>.spec.ts'],
  ['apps/history-svc/src/legacy.ts', 'unexpected at src/ root'],
  ['apps/history-svc/src/worker/job.ts', 'unexpected folder src/worker/'],
  ['apps/gateway/src/domain/events.ts', 'unexpected folder src/domain/'],
  ['apps/history-svc/src/api/routes.spec.ts', 'named <what>.<unit|api|int>.spec.ts'],
  ['apps/history-svc/src/domain/decider.api.spec.ts', 'domain/ specs are pure'],
  ['apps/history-svc/src/projections/history.int.spec.ts', 'projections/ specs are pure'],
  ['apps/history-svc/src/testing/history-system.unit.spec.ts', 'holds fixtures, not specs'],
])('fails on %s, naming it', (file, message) => {
  const { status, problems } = workspace([...service, ...gateway, file]);
  expect(status).toBe(1);
  expect(problems).toContain(`layout: ${file}: `);
  expect(problems).toContain(message);
});

it('fails on a service without its required parts, naming each', () => {
  const { status, problems } = workspace(['apps/profile-svc/src/main.ts', 'apps/profile-svc/src/api/routes.ts']);
  expect(status).toBe(1);
  for (const missing of ['app.ts', 'domain/aggregate.ts', 'domain/decider.ts', 'projections']) {
    expect(problems).toContain(`layout: apps/profile-svc/src/${missing}: missing`);
  }
});
