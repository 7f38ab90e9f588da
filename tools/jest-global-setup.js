// Every project's jest global setup (jest.preset.js). On a Node that cannot run TypeScript (below 22.18: the Node 20.19
// the README allows), the SQLite stores' worker threads cannot start from their .ts sources, which jest's transform
// does not reach: they are bundled here once per run, as `npm start` bundles them, and found through
// WORKER_BUNDLES_DIR (libs/eventstore/src/worker-entry.ts). Newer Node runs the sources as they are.
const { execFileSync } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..');

module.exports = () => {
  if (process.features.typescript || process.env.WORKER_BUNDLES_DIR) return;
  // Inside the repository, where the bundles' packages (better-sqlite3) are found; one folder per run.
  const dir = join(root, 'tmp', 'jest-workers', String(process.pid));
  execFileSync(process.execPath, [join(root, 'tools', 'build.mjs'), '--outdir', dir, '--workers'], { stdio: 'inherit' });
  // Test files read it in jest's workers, which start after this and inherit the environment.
  process.env.WORKER_BUNDLES_DIR = dir;
};
