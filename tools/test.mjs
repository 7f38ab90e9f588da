#!/usr/bin/env node
// `npm test`: every project's jest suite through Nx (`npm test -- <project>...`: those only), then one closing summary
// for what ran, in jest's own words (so a reader or a CI log parser finds it as it would for one project) and as one
// line:
//   Test Suites: N failed, N passed, N total
//   Tests:       N failed, N skipped, N passed, N total
//   tests: N passed, N failed, N skipped
// preceded by the list of skipped tests with their reasons and the ten slowest suites with their times. The summary
// is also written to tmp/test-results/summary.txt, so .ci/run can repeat it as the last lines of its log.
// JEST_RESULTS_DIR names another folder for the results (CI runs two `npm test` at once, each with its own).
// A project that did not report (its jest crashed) counts as a failure, and so does one whose jest did not exit when its
// run was over (tools/jest-results-reporter.js ends it and records what it left open).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { noticeUnsupportedNode } from './node-support.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
noticeUnsupportedNode('test');
const resultsDir = resolve(root, process.env.JEST_RESULTS_DIR || join('tmp', 'test-results'));
rmSync(resultsDir, { recursive: true, force: true });
// Each project's reporter (tools/jest-results-reporter.js) writes where this run reads.
process.env.JEST_RESULTS_DIR = resultsDir;

const allProjects = JSON.parse(
  spawnSync('npx', ['nx', 'show', 'projects', '--with-target', 'test', '--json'], { cwd: root, encoding: 'utf8' }).stdout,
);
// `npm test -- history-svc gateway-core` (or `--projects=history-svc,gateway-core`): those projects only, and the
// summary counts only them. Other options go to `nx run-many` as they are.
const args = process.argv.slice(2);
const named = [
  ...args.filter((a) => !a.startsWith('-')),
  ...args.filter((a) => a.startsWith('--projects=')).flatMap((a) => a.slice('--projects='.length).split(',')),
].filter(Boolean);
const unknown = named.filter((name) => !allProjects.includes(name));
if (unknown.length) {
  console.error(`no project with tests named ${unknown.join(', ')}; the projects: ${[...allProjects].sort().join(', ')}`);
  process.exit(2);
}
const projects = named.length ? allProjects.filter((p) => named.includes(p)) : allProjects;
const passOn = args.filter((a) => a.startsWith('-') && !a.startsWith('--projects='));
const nx = spawnSync(
  'npx',
  [
    'nx',
    'run-many',
    '-t',
    'test',
    '--parallel=1',
    '--outputStyle=stream',
    ...(named.length ? [`--projects=${projects.join(',')}`] : []),
    ...passOn,
  ],
  { cwd: root, stdio: 'inherit' },
);
const totals = { passed: 0, failed: 0, skipped: 0, passedSuites: 0, failedSuites: 0, skippedSuites: 0, totalSuites: 0 };
const missing = [];
const failing = [];
const unexited = [];
const skippedTests = [];
const failures = [];
const suites = [];
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
  totals.passedSuites += r.passedSuites ?? 0;
  totals.failedSuites += r.failedSuites ?? 0;
  totals.skippedSuites += r.skippedSuites ?? 0;
  totals.totalSuites += r.totalSuites ?? 0;
  skippedTests.push(...(r.skippedTests ?? []));
  suites.push(...(r.suites ?? []));
  failures.push(...(r.failedTests ?? []));
  if (r.failed || r.failedSuites) failing.push(project);
  if (r.openHandles) unexited.push([project, r.openHandles]);
}

/** "TCP connection a -> b" lines counted by where they go: 33 connections to one server make one line, not 33. */
function countAlike(open) {
  const counts = new Map();
  for (const line of open) {
    const key = line.replace(/^TCP connection \S+ -> /, 'TCP connections to ');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([line, n]) => (n > 1 || line.startsWith('TCP connections to ') ? `${n} x ${line}` : line));
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
// Where the time went: the suites to look at first when the run grows slow.
if (suites.length) {
  const slowest = suites.sort((a, b) => b.seconds - a.seconds).slice(0, 10);
  console.log(`\nslowest suites (of ${suites.length}):`);
  for (const suite of slowest) console.log(`  ${suite.seconds.toFixed(1).padStart(6)} s  ${suite.file}`);
}
if (failures.length) {
  console.error(`\nfailed (${failures.length}):`);
  for (const test of failures) console.error(`  ${test.file}: ${test.name}\n      ${test.why}`);
}
if (missing.length) console.error(`projects that reported no results: ${missing.join(', ')}`);
if (failing.length) console.error(`projects with failures: ${failing.join(', ')}`);
for (const [project, open] of unexited)
  console.error(`project whose jest did not exit: ${project}, still open: ${countAlike(open).join('; ')}`);
// A project that never reported, or never exited, counts as one failed suite and one failed test: its run did not pass.
const failedTests = totals.failed + missing.length + unexited.length;
const failedSuites = totals.failedSuites + missing.length + unexited.length;
const count = (n, what) => (n ? [`${n} ${what}`] : []);
const summary = [
  `Test Suites: ${[...count(failedSuites, 'failed'), ...count(totals.skippedSuites, 'skipped'), `${totals.passedSuites} passed`].join(', ')}, ${totals.totalSuites + missing.length + unexited.length} total`,
  `Tests:       ${[...count(failedTests, 'failed'), ...count(totals.skipped, 'skipped'), `${totals.passed} passed`].join(', ')}, ${totals.passed + failedTests + totals.skipped} total`,
  `tests: ${totals.passed} passed, ${failedTests} failed, ${totals.skipped} skipped`,
].join('\n');
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, 'summary.txt'), `${summary}\n`);
console.log(`\n${summary}`);
process.exit(nx.status !== 0 || missing.length || failing.length || unexited.length || totals.passed === 0 ? 1 : 0);
