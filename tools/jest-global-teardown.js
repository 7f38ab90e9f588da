// Removes the worker bundles tools/jest-global-setup.js made for this run (none on a Node that runs TypeScript).
const { rmSync } = require('node:fs');
const { join } = require('node:path');

module.exports = () => {
  rmSync(join(__dirname, '..', 'tmp', 'jest-workers', String(process.pid)), { recursive: true, force: true });
};
