// Records each project's jest totals in tmp/test-results/, so `npm test` can print one closing line for the
// whole workspace (and notice a project that never reported).
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
      }),
    );
  }
}

module.exports = ResultsReporter;
