#!/usr/bin/env node
// `npm test`: every project's jest suite through Nx, then one closing line for the whole workspace:
//   tests: N passed, N failed, N skipped
// preceded by the list of skipped tests with their reasons.
// A project that did not report (its jest crashed) counts as a failure.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { noticeUnsupportedNode } from './node-support.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
noticeUnsupportedNode('test');
const resultsDir = join(root, 'tmp', 'test-results');
rmSync(resultsDir, { recursive: true, force: true });

const nx = spawnSync('npx', ['nx', 'run-many', '-t', 'test', '--parallel=1', '--outputStyle=stream', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});

const projects = JSON.parse(
  spawnSync('npx', ['nx', 'show', 'projects', '--with-target', 'test', '--json'], { cwd: root, encoding: 'utf8' }).stdout,
);
const totals = { passed: 0, failed: 0, skipped: 0 };
const missing = [];
const failing = [];
const skippedTests = [];
for (const project of projects) {
  const file = join(resultsDir, `${findProjectRoot(project).replace(/[\\/]/g, '__')}.json`);
  if (!existsSync(file)) {
    missing.push(project);
    continue;
  }
  const r = JSON.parse(readFileSync(file, 'utf8'));
  totals.passed += r.passed;
  totals.failed += r.failed;
  totals.skipped += r.skipped;
  skippedTests.push(...(r.skippedTests ?? []));
  if (r.failed || r.failedSuites) failing.push(project);
}

function findProjectRoot(name) {
  for (const base of ['apps', 'libs', 'tools']) {
    for (const dir of existsSync(join(root, base)) ? readdirSync(join(root, base)) : []) {
      const file = join(root, base, dir, 'project.json');
      if (existsSync(file) && JSON.parse(readFileSync(file, 'utf8')).name === name) return join(base, dir);
    }
  }
  throw new Error(`no project.json for ${name}`);
}

// A count alone ("1 skipped") hides what did not run: name each skipped test, whose title gives the reason.
if (skippedTests.length) {
  console.log(`\nskipped (${skippedTests.length}):`);
  for (const test of skippedTests) console.log(`  ${test.file}: ${test.name}`);
}
if (missing.length) console.error(`projects that reported no results: ${missing.join(', ')}`);
if (failing.length) console.error(`projects with failures: ${failing.join(', ')}`);
console.log(`\ntests: ${totals.passed} passed, ${totals.failed + missing.length} failed, ${totals.skipped} skipped`);
process.exit(nx.status !== 0 || missing.length || failing.length || totals.passed === 0 ? 1 : 0);
