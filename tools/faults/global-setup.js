// Builds history-svc and the gateway once for all fault suites (they run them as processes), only when they will run.
const { execFileSync } = require('node:child_process');
const { join } = require('node:path');
const { distDir } = require('./paths');

module.exports = () => {
  // The preset's own setup first (this one replaces it): worker bundles on a Node that cannot run TypeScript.
  require('../jest-global-setup')();
  if (!process.env.MONGO_URL || !process.env.KAFKA_BROKERS) return;
  const root = join(__dirname, '..', '..');
  execFileSync(process.execPath, [join(root, 'tools', 'build.mjs'), '--outdir', distDir, 'history-svc', 'gateway'], { stdio: 'inherit' });
};
