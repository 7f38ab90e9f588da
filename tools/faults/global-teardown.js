const { rmSync } = require('node:fs');
const { distDir } = require('./paths');

module.exports = () => {
  require('../jest-global-teardown')();
  rmSync(distDir, { recursive: true, force: true });
};
