import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The exit watchdog of tools/jest-results-reporter.js (in every project's reporters), on a fixture project run by the
 * real jest: a run whose tests leave something open must end failed, in bounded time, naming what is open.
 */
const root = join(__dirname, '..', '..');
const jestBin = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const reporter = join(root, 'tools', 'jest-results-reporter.js');
let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'udp-jest-exit-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** What the reporter records for `npm test`. */
interface Recorded {
  passed: number;
  failed: number;
  openHandles?: string[];
  failedTests: Array<{ file: string; name: string; why: string }>;
  suites: Array<{ file: string; seconds: number }>;
}

/** Runs jest on one spec (plain JavaScript) with the watchdog at `exitTimeoutS`; returns how it ended and what it recorded. */
function runJest(spec: string, exitTimeoutS: number) {
  writeFileSync(join(dir, 'fixture.spec.js'), spec);
  const config = { rootDir: dir, testMatch: ['<rootDir>/*.spec.js'], transform: {}, reporters: ['default', reporter] };
  const started = Date.now();
  const run = spawnSync(process.execPath, [jestBin, '--config', JSON.stringify(config), '--ci'], {
    cwd: dir,
    env: { ...process.env, JEST_EXIT_TIMEOUT_S: String(exitTimeoutS), JEST_RESULTS_DIR: join(dir, 'results'), FORCE_COLOR: '0' },
    encoding: 'utf8',
    // Without a watchdog the leaking run never ends: cut it off here, so the assertions below say so.
    timeout: 60_000,
  });
  const results = join(dir, 'results');
  const file = existsSync(results) ? readdirSync(results)[0] : undefined;
  return {
    status: run.status,
    ms: Date.now() - started,
    stderr: run.stderr,
    recorded: file ? (JSON.parse(readFileSync(join(results, file), 'utf8')) as Recorded) : undefined,
  };
}

it('ends a run that leaves a server and a timer open with exit 1 after the wait, naming them', () => {
  const leaking = `
    const net = require('node:net');
    test('passes, and leaves a server and an interval behind', async () => {
      const server = net.createServer().listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      setInterval(function heartbeat() {}, 1000);
      expect(server.address().port).toBeGreaterThan(0);
    });`;

  const run = runJest(leaking, 3);

  expect(run.status).toBe(1);
  expect(run.ms).toBeLessThan(30_000);
  expect(run.stderr).toMatch(/jest did not exit 3 s after its run ended; still open:/);
  expect(run.stderr).toMatch(/server listening on 127\.0\.0\.1:\d+/);
  // What `npm test` reads: the tests passed, and the run is recorded with what it left open (so the project fails)
  expect(run.recorded?.passed).toBe(1);
  expect(run.recorded?.openHandles).toEqual(
    expect.arrayContaining([expect.stringMatching(/^server listening on 127\.0\.0\.1:\d+$/), expect.stringMatching(/Timeout x1/)]),
  );
});

it('names a TCP connection left open by its two ends', () => {
  const leaking = `
    const net = require('node:net');
    test('connects and never closes', async () => {
      const server = net.createServer().listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      const socket = net.connect(server.address().port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      server.close();
    });`;

  const run = runJest(leaking, 2);

  expect(run.status).toBe(1);
  expect(run.recorded?.openHandles).toEqual(
    expect.arrayContaining([expect.stringMatching(/^TCP connection 127\.0\.0\.1:\d+ -> 127\.0\.0\.1:\d+$/)]),
  );
});

it('leaves a run that closes what it opened alone: exit 0, nothing recorded as open', () => {
  const tidy = `
    const net = require('node:net');
    test('opens a server and closes it', async () => {
      const server = net.createServer().listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      await new Promise((resolve) => server.close(resolve));
    });`;

  const run = runJest(tidy, 2);

  expect(run.status).toBe(0);
  expect(run.stderr).not.toMatch(/did not exit/);
  expect(run.recorded).toMatchObject({ passed: 1 });
  expect(run.recorded?.openHandles).toBeUndefined();
});

it('records each failed test and each suite that could not run with the gist of why (npm test lists them last)', () => {
  const failing = `
    test('adds', () => expect(1 + 1).toBe(2));
    describe('a store', () => {
      test('answers in time', () => { throw new Error('timed out after 5000 ms waiting for the store\\nat the second line'); });
    });`;

  const run = runJest(failing, 2);

  expect(run.status).toBe(1);
  const recorded = run.recorded!;
  expect(recorded).toMatchObject({ passed: 1, failed: 1 });
  expect(recorded.failedTests).toEqual([
    {
      file: expect.stringMatching(/fixture\.spec\.js$/),
      name: 'a store answers in time',
      why: expect.stringMatching(/timed out after 5000 ms waiting for the store$/),
    },
  ]);

  const broken = runJest(`require('./no-such-module');\ntest('never runs', () => {});`, 2);
  const brokenRecorded = broken.recorded!;
  expect(brokenRecorded.failedTests).toEqual([
    { file: expect.any(String), name: '(the suite did not run)', why: expect.stringMatching(/no-such-module/) },
  ]);
});

it("records each suite's wall time (npm test names the slowest ten)", () => {
  const slow = `
    test('takes 400 ms', () => new Promise((resolve) => setTimeout(resolve, 400)));`;

  const run = runJest(slow, 2);

  expect(run.status).toBe(0);
  expect(run.recorded?.suites).toEqual([{ file: expect.stringMatching(/fixture\.spec\.js$/), seconds: expect.any(Number) }]);
  const { seconds } = run.recorded!.suites[0];
  // At least the test's own 400 ms, at most the whole jest run's.
  expect(seconds).toBeGreaterThanOrEqual(0.4);
  expect(seconds * 1000).toBeLessThanOrEqual(run.ms);
});
