// Records each project's jest totals in tmp/test-results/, so `npm test` can print one closing line for the
// whole workspace (and notice a project that never reported), and list what was skipped and why.
const { mkdirSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..');

class ResultsReporter {
  constructor(globalConfig) {
    this.project = relative(root, globalConfig.rootDir).replace(/[\\/]/g, '__') || 'root';
  }

  onRunComplete(_contexts, results) {
    const dir = join(root, 'tmp', 'test-results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, `${this.project}.json`),
      JSON.stringify({
        passed: results.numPassedTests,
        failed: results.numFailedTests,
        skipped: results.numPendingTests + results.numTodoTests,
        failedSuites: results.numFailedTestSuites + results.numRuntimeErrorTestSuites,
        passedSuites: results.numPassedTestSuites,
        skippedSuites: results.numPendingTestSuites,
        totalSuites: results.numTotalTestSuites,
        // Each skipped test by file and full name: a skipped suite names its reason in its test's title.
        skippedTests: results.testResults.flatMap((file) =>
          file.testResults
            .filter((test) => test.status === 'pending' || test.status === 'todo')
            .map((test) => ({ file: relative(root, file.testFilePath), name: test.fullName })),
        ),
      }),
    );
  }
}

module.exports = ResultsReporter;
