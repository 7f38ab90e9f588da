const { rmSync } = require('node:fs');
const { distDir } = require('./paths');

module.exports = () => rmSync(distDir, { recursive: true, force: true });
