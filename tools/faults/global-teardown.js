const { rmSync } = require('node:fs');
const { distDir } = require('./paths');

module.exports = () => {
  require('../jest-global-teardown')();
  // Only the bundles this run built (global-setup.js, when the servers are there): a run without them, beside one with
  // them (CI runs both at once), must not delete the bundles the other's suites start.
  if (process.env.MONGO_URL && process.env.KAFKA_BROKERS) rmSync(distDir, { recursive: true, force: true });
};
