// Records each project's jest totals and each suite's duration in tmp/test-results/, so `npm test` can print one
// closing line for the whole workspace (and notice a project that never reported), list what was skipped and why, and
// name the slowest suites.
// It also watches that jest exits once its run is over: a test that leaves a socket, server or timer open keeps jest
// alive for good (CI once waited 8 minutes on a Kafka connection). Past JEST_EXIT_TIMEOUT_S seconds (60) it names
// what is still open, records it with the totals (`npm test` counts the project as failed) and ends jest with exit 1.
const { mkdirSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..');

class ResultsReporter {
  constructor(globalConfig) {
    this.globalConfig = globalConfig;
    this.project = relative(root, globalConfig.rootDir).replace(/[\\/]/g, '__') || 'root';
  }

  onRunComplete(_contexts, results) {
    // JEST_RESULTS_DIR: another place for the totals (the watchdog's own spec runs jest on a fixture project).
    const dir = process.env.JEST_RESULTS_DIR || join(root, 'tmp', 'test-results');
    const file = join(dir, `${this.project}.json`);
    const totals = {
      passed: results.numPassedTests,
      failed: results.numFailedTests,
      skipped: results.numPendingTests + results.numTodoTests,
      failedSuites: results.numFailedTestSuites + results.numRuntimeErrorTestSuites,
      passedSuites: results.numPassedTestSuites,
      skippedSuites: results.numPendingTestSuites,
      totalSuites: results.numTotalTestSuites,
      // Each suite's file and wall time in seconds, so `npm test` can name the slowest (where CI's time goes).
      suites: results.testResults.map((file) => ({
        file: relative(root, file.testFilePath),
        seconds: Math.round((file.perfStats.end - file.perfStats.start) / 10) / 100,
      })),
      // Each skipped test by file and full name: a skipped suite names its reason in its test's title.
      skippedTests: results.testResults.flatMap((file) =>
        file.testResults
          .filter((test) => test.status === 'pending' || test.status === 'todo')
          .map((test) => ({ file: relative(root, file.testFilePath), name: test.fullName })),
      ),
      // Each failed test, and each suite that failed outside its tests, with the first line of why: CI's log may keep
      // only its last lines, and "projects with failures: x" alone sends a reader back through thousands of lines.
      failedTests: results.testResults.flatMap((file) => [
        ...(file.testExecError
          ? [{ file: relative(root, file.testFilePath), name: '(the suite did not run)', why: gist(file.testExecError.message) }]
          : []),
        ...file.testResults
          .filter((test) => test.status === 'failed')
          .map((test) => ({ file: relative(root, file.testFilePath), name: test.fullName, why: gist(test.failureMessages[0]) })),
      ]),
    };
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, JSON.stringify(totals));
    if (this.globalConfig.watch || this.globalConfig.watchAll) return;

    const seconds = Number(process.env.JEST_EXIT_TIMEOUT_S || 60);
    // Unreferenced: it never keeps jest alive itself, so it fires only when something else does.
    setTimeout(() => {
      const open = openHandles();
      process.stderr.write(
        `\n[jest] ${this.project}: jest did not exit ${seconds} s after its run ended; still open:\n` +
          open.map((line) => `  ${line}\n`).join('') +
          `  (where each was made: jest --detectOpenHandles; this wait: JEST_EXIT_TIMEOUT_S)\n`,
      );
      writeFileSync(file, JSON.stringify({ ...totals, openHandles: open }));
      process.exit(1);
    }, seconds * 1000).unref();
  }
}

/** The gist of a failure: its first three lines that say something (no stack frames), without colour codes, at most 300 characters. */
function gist(message = '') {
  // eslint-disable-next-line no-control-regex
  const plain = String(message).replace(/\u001b\[[0-9;]*m/g, '');
  const lines = plain
    .split('\n')
    .map((text) => text.trim())
    .filter((text) => text !== '' && !text.startsWith('at '));
  return lines.slice(0, 3).join(' · ').slice(0, 300);
}

/** What keeps this process alive: each socket, server, child and worker by what it is, then every resource by kind. */
function openHandles() {
  const stdio = new Set([process.stdin, process.stdout, process.stderr]);
  const lines = process
    ._getActiveHandles()
    .filter((handle) => !stdio.has(handle))
    .map(describeHandle);
  const kinds = {};
  for (const kind of process.getActiveResourcesInfo()) kinds[kind] = (kinds[kind] ?? 0) + 1;
  // Timers are listed only here (by kind): their callbacks say little without --detectOpenHandles' stacks.
  lines.push(
    `resources by kind: ${
      Object.entries(kinds)
        .map(([kind, n]) => `${kind} x${n}`)
        .join(', ') || 'none'
    }`,
  );
  return lines;
}

function describeHandle(handle) {
  const kind = handle.constructor?.name ?? typeof handle;
  if (kind === 'Socket' && handle.remoteAddress) {
    return `TCP connection ${handle.localAddress}:${handle.localPort} -> ${handle.remoteAddress}:${handle.remotePort}`;
  }
  if (kind === 'Server') {
    const address = handle.address();
    return `server listening on ${typeof address === 'string' ? address : `${address?.address}:${address?.port}`}`;
  }
  if (kind === 'ChildProcess') return `child process ${handle.pid}: ${handle.spawnargs.join(' ')}`;
  if (kind === 'Worker') return `worker thread ${handle.threadId}`;
  return kind;
}

module.exports = ResultsReporter;
