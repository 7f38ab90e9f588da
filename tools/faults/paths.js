// The bundle keeps node_modules external, so it must live inside the repo to find them (tmp/ is ignored).
// support.ts names the same directory.
const { join } = require('node:path');

module.exports = { distDir: join(__dirname, '..', '..', 'tmp', 'faults-dist') };
